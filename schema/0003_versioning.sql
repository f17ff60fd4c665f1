-- S3 object versioning.
--
-- Version rows already carry what versioning needs (0001): version_id ('null' outside versioning),
-- created_seq / superseded_seq (current = superseded_seq IS NULL) and is_delete_marker. A versioned bucket
-- keeps superseded rows (and their blob references) instead of deleting them, and a DELETE without a
-- version id publishes a delete marker as the key's current version.
--
-- ListObjects/ListObjectsV2 list current versions that are not delete markers. In a versioned bucket many
-- keys can be "deleted" (current version = delete marker); this index lets a listing page skip them all in
-- one range scan instead of reading past each marker. ListObjectVersions scans object_versions_history
-- (bucket_id, key, created_seq DESC), which already orders a key's versions newest first.
CREATE INDEX object_versions_listed ON object_versions (bucket_id, key)
    WHERE superseded_seq IS NULL AND NOT is_delete_marker;
