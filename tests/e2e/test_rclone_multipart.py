"""rclone (Debian's) copying a tree with files above its multipart cutoff, then check, copy back and lsf.

test_rclone.py covers small files; here --s3-upload-cutoff 5M --s3-chunk-size 5M makes rclone upload
the larger files as multipart uploads (5 MiB parts, several in parallel). `rclone check` compares sizes
and MD5s: for multipart objects rclone reads the MD5 it stored in the object's metadata
(X-Amz-Meta-Md5chksum), so that metadata must survive CreateMultipartUpload -> Complete.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from depot_harness import clean_env, run

MiB = 1024 * 1024
RCLONE = "/usr/bin/rclone"


def data(n: int, seed) -> bytes:
    return random.Random(str(seed)).randbytes(n)


FILES = {
    "README.md": b"# a model\n",
    "config/params.json": b'{"layers": 12}\n',
    "weights/shard-00001.bin": data(12 * MiB + 17, "shard1"),  # 3 parts: 5 + 5 + 2 MiB
    "weights/shard-00002.bin": data(7 * MiB, "shard2"),       # 2 parts
    "weights/exactly-5m.bin": data(5 * MiB, "five"),          # at the cutoff: a single PUT
    "weights/small.bin": data(100_000, "small"),
    "tokenizer/vocab with space.txt": "h\u00e9llo w\u00f6rld\n".encode(),
}


def rclone(depot, *args: str, check: bool = True, timeout: float = 300):
    user = depot.user("alice")
    env = clean_env({
        "RCLONE_CONFIG": str(depot.workdir / "rclone-multipart.conf"),  # absent: the remote is in the variables
        "RCLONE_CONFIG_DEPOTMP_TYPE": "s3",
        "RCLONE_CONFIG_DEPOTMP_PROVIDER": "Other",
        "RCLONE_CONFIG_DEPOTMP_ACCESS_KEY_ID": user.access_key,
        "RCLONE_CONFIG_DEPOTMP_SECRET_ACCESS_KEY": user.secret,
        "RCLONE_CONFIG_DEPOTMP_ENDPOINT": depot.endpoint,
        "RCLONE_CONFIG_DEPOTMP_REGION": depot.region,
        "RCLONE_CONFIG_DEPOTMP_FORCE_PATH_STYLE": "true",
    })
    return run([RCLONE, "--retries", "1", "--low-level-retries", "1", "--s3-upload-cutoff", "5M",
                "--s3-chunk-size", "5M", "--s3-upload-concurrency", "4", *args],
               env=env, check=check, timeout=timeout)


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, body in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(body)


def read_tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def parts_of(body: bytes, size: int = 5 * MiB) -> list[bytes]:
    return [body[i:i + size] for i in range(0, len(body), size)]


@pytest.mark.slow
def test_rclone_multipart_copy_check_and_copy_back(depot, s3, bucket, tmp_path):
    src = tmp_path / "src"
    write_tree(src, FILES)
    rclone(depot, "copy", str(src), f"depotmp:{bucket}/model")

    # The large files went up as multipart uploads of 5 MiB parts, nothing is left in progress.
    for rel in ("weights/shard-00001.bin", "weights/shard-00002.bin"):
        head = s3.head_object(Bucket=bucket, Key=f"model/{rel}")
        parts = parts_of(FILES[rel])
        digest = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()
        assert head["ETag"] == f'"{digest}-{len(parts)}"', rel
        assert head["ContentLength"] == len(FILES[rel])
        assert head["Metadata"].get("md5chksum"), "rclone's MD5 metadata was not kept"
    head = s3.head_object(Bucket=bucket, Key="model/weights/exactly-5m.bin")
    # rclone sends a file that is not below --s3-upload-cutoff as a multipart upload, here of one part.
    whole = hashlib.md5(FILES["weights/exactly-5m.bin"])
    assert head["ETag"] in ('"' + whole.hexdigest() + '"', '"' + hashlib.md5(whole.digest()).hexdigest() + '-1"')
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []

    listed = rclone(depot, "lsf", "-R", "--files-only", f"depotmp:{bucket}/model").stdout.splitlines()
    assert sorted(listed) == sorted(FILES)
    sizes = dict(line.split(";", 1) for line in
                 rclone(depot, "lsf", "-R", "--files-only", "--format", "ps", "--separator", ";",
                        f"depotmp:{bucket}/model").stdout.splitlines())
    assert {path: int(size) for path, size in sizes.items()} == {rel: len(b) for rel, b in FILES.items()}

    # Sizes and MD5 hashes agree (multipart objects: via rclone's stored MD5), then a download check.
    rclone(depot, "check", str(src), f"depotmp:{bucket}/model")
    rclone(depot, "check", "--download", str(src), f"depotmp:{bucket}/model")

    dst = tmp_path / "dst"
    rclone(depot, "copy", f"depotmp:{bucket}/model", str(dst))
    assert read_tree(dst) == FILES

    # A second copy has nothing to do (same sizes and hashes): no new object versions.
    objects_before = depot.db.object_rows()
    rclone(depot, "copy", str(src), f"depotmp:{bucket}/model")
    assert depot.db.object_rows() == objects_before
