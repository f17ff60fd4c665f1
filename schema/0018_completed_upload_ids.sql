-- The upload id of an object version made by CompleteMultipartUpload. S3 answers a repeated
-- CompleteMultipartUpload of an upload it already completed (a client retrying after a lost response) with
-- success, not NoSuchUpload: the upload row is gone once completed, so the version remembers its upload.
-- NULL for versions written otherwise (and for those completed before this migration).
ALTER TABLE object_versions ADD COLUMN upload_id text;
