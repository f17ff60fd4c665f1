-- Object and bucket tagging (PutObjectTagging / x-amz-tagging, PutBucketTagging): tag sets as JSON arrays of
-- [key, value] pairs in the order they were given, like user_metadata.
--
-- An object version's tags are a column of its row, not rows of their own: tagging a version changes that
-- row and creates no version; deleting (or purging) a version deletes its tags with it, so there are never
-- tags without an object. Tags are not content: a frozen model version keeps its bytes and digests whatever
-- its files' tags say.
ALTER TABLE object_versions ADD COLUMN tags jsonb NOT NULL DEFAULT '[]';
-- x-amz-tagging of CreateMultipartUpload, applied to the object CompleteMultipartUpload creates.
ALTER TABLE multipart_uploads ADD COLUMN tags jsonb NOT NULL DEFAULT '[]';
-- A bucket's tag set; NULL when it has none (GetBucketTagging: NoSuchTagSet). Changing it updates the row,
-- so schema 0012's trigger drops the bucket from every lookup cache.
ALTER TABLE buckets ADD COLUMN tags jsonb;
