-- Multipart uploads. A part is a manifest of segments like an object (UploadPartCopy references ranges of
-- existing blobs and may span several of them); completing an upload concatenates the listed parts'
-- segments into the new object version, so no byte moves. Each part segment holds one blob reference.

CREATE TABLE multipart_uploads (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    upload_id           text NOT NULL UNIQUE,
    bucket_id           bigint NOT NULL REFERENCES buckets (id),
    key                 text COLLATE "C" NOT NULL,
    owner_id            text NOT NULL REFERENCES users (id),
    initiated_at        timestamptz NOT NULL DEFAULT now(),
    content_type        text,
    content_encoding    text,
    content_disposition text,
    content_language    text,
    cache_control       text,
    expires             text,
    user_metadata       jsonb NOT NULL DEFAULT '[]',
    checksum_algorithm  text,  -- CRC32, CRC32C, CRC64NVME, SHA1, SHA256 when the upload declared one
    checksum_type       text   -- COMPOSITE or FULL_OBJECT
);
CREATE INDEX multipart_uploads_listing ON multipart_uploads (bucket_id, key, upload_id);
CREATE INDEX multipart_uploads_age ON multipart_uploads (initiated_at);

CREATE TABLE multipart_parts (
    upload_row  bigint NOT NULL REFERENCES multipart_uploads (id) ON DELETE CASCADE,
    part_number integer NOT NULL CHECK (part_number BETWEEN 1 AND 10000),
    size        bigint NOT NULL CHECK (size >= 0),
    etag        text NOT NULL,
    checksum    text,          -- base64 of the part's checksum in the upload's algorithm
    crc64nvme   bytea NOT NULL, -- always computed: the default full-object checksum combines these
    uploaded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (upload_row, part_number)
);

CREATE TABLE multipart_part_segments (
    upload_row  bigint NOT NULL,
    part_number integer NOT NULL,
    ordinal     integer NOT NULL,
    blob_id     bigint NOT NULL REFERENCES blobs (id),
    blob_offset bigint NOT NULL DEFAULT 0,
    length      bigint NOT NULL,
    PRIMARY KEY (upload_row, part_number, ordinal),
    FOREIGN KEY (upload_row, part_number) REFERENCES multipart_parts (upload_row, part_number) ON DELETE CASCADE
);
CREATE INDEX multipart_part_segments_blob ON multipart_part_segments (blob_id);

-- Which part of a multipart object a segment came from.
ALTER TABLE object_segments ADD COLUMN part_number integer;

-- The parts of a completed multipart object, for GetObject ?partNumber=N and GetObjectAttributes.
CREATE TABLE object_parts (
    version_row bigint NOT NULL REFERENCES object_versions (id) ON DELETE CASCADE,
    part_number integer NOT NULL,
    offset_in_object bigint NOT NULL,
    size        bigint NOT NULL,
    checksum    text,
    PRIMARY KEY (version_row, part_number)
);

-- Flexible checksums stored with an object (x-amz-checksum-*), returned with x-amz-checksum-mode: ENABLED.
ALTER TABLE object_versions
    ADD COLUMN checksum_algorithm text,
    ADD COLUMN checksum_type text,
    ADD COLUMN checksum_value text;
