-- Access control (issue 27): ACLs, PublicAccessBlock and object ownership controls.
--
-- A bucket's ACL and an object version's ACL hold their grants as depotd stores them (s3/acl.hpp: one grant a
-- line); NULL means the default ACL, the owner's FULL_CONTROL alone. Grants are extra facts for
-- auth::authorize, never around Depot's rules (scopes, team roles, read-only credentials, models buckets).
ALTER TABLE buckets ADD COLUMN acl text;
-- The bucket's PublicAccessBlock configuration as four flags "BlockPublicAcls,IgnorePublicAcls,
-- BlockPublicPolicy,RestrictPublicBuckets" ('1'/'0' each, e.g. '1100'); NULL when it has none.
ALTER TABLE buckets ADD COLUMN public_access_block text CHECK (public_access_block ~ '^[01]{4}$');
-- Object ownership: BucketOwnerEnforced (ACLs disabled, AWS's default for new buckets since 2023, and what
-- every bucket created before this migration behaved as), BucketOwnerPreferred, ObjectWriter; NULL when the
-- bucket's ownership controls were deleted (which behaves as ObjectWriter, as on S3).
ALTER TABLE buckets ADD COLUMN object_ownership text DEFAULT 'BucketOwnerEnforced'
    CHECK (object_ownership IN ('BucketOwnerEnforced', 'BucketOwnerPreferred', 'ObjectWriter'));

-- Object versions' ACLs (only versions with an ACL other than the default have a row). A table of its own:
-- reading an object's ACL is needed only for callers other than the bucket's owner.
CREATE TABLE object_acls (
    version_row bigint PRIMARY KEY REFERENCES object_versions (id) ON DELETE CASCADE,
    acl         text NOT NULL
);
