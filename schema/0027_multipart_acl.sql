-- ACLs on CreateMultipartUpload (x-amz-acl, x-amz-grant-*): the completed object's ACL, held with the upload
-- in its stored form (s3::stored_acl, as object_acls.acl) and given to the version CompleteMultipartUpload
-- creates, in the same transaction. NULL: the default ACL (the owner's FULL_CONTROL alone).
ALTER TABLE multipart_uploads ADD COLUMN acl text;
