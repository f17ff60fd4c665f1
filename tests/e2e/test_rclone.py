"""rclone (Debian's) against depotd: copy, list, check (MD5 via ETag), sync with deletes, cat, purge; --s3-acl.
(test_sse.py: rclone's SSE-C flags.)"""

from __future__ import annotations

from pathlib import Path

import requests

from depot_harness import clean_env, expect_error, run, unique_bucket_name

FILES = {
    "top.txt": b"top level\n",
    "nested/deeper/leaf.bin": bytes(range(256)) * 40,
    "with space/file name.txt": b"spaces\n",
    "\u00fcn\u00efc\u00f6d\u00e9/\u65e5\u672c\u8a9e.txt": "unicode \u2713\n".encode(),
}


def rclone(depot, *args: str, check: bool = True):
    user = depot.user("alice")
    env = clean_env({
        "RCLONE_CONFIG": str(depot.workdir / "rclone.conf"),  # absent: the remote comes from the variables
        "RCLONE_CONFIG_DEPOT_TYPE": "s3",
        "RCLONE_CONFIG_DEPOT_PROVIDER": "Other",
        "RCLONE_CONFIG_DEPOT_ACCESS_KEY_ID": user.access_key,
        "RCLONE_CONFIG_DEPOT_SECRET_ACCESS_KEY": user.secret,
        "RCLONE_CONFIG_DEPOT_ENDPOINT": depot.endpoint,
        "RCLONE_CONFIG_DEPOT_REGION": depot.region,
        "RCLONE_CONFIG_DEPOT_FORCE_PATH_STYLE": "true",
    })
    return run(["/usr/bin/rclone", "--retries", "1", "--low-level-retries", "1", *args], env=env, check=check)


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def read_tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_rclone_copy_check_sync_cat_purge(depot, s3, tmp_path):
    name = unique_bucket_name("rclone")
    rclone(depot, "mkdir", f"depot:{name}")
    s3.head_bucket(Bucket=name)

    src = tmp_path / "src"
    write_tree(src, FILES)
    rclone(depot, "copy", str(src), f"depot:{name}/tree")
    listed = rclone(depot, "lsf", "-R", "--files-only", f"depot:{name}/tree").stdout.splitlines()
    assert sorted(listed) == sorted(FILES)
    rclone(depot, "check", str(src), f"depot:{name}/tree")  # sizes and MD5s (ETags) agree
    assert rclone(depot, "cat", f"depot:{name}/tree/top.txt").stdout == "top level\n"

    (src / "top.txt").write_bytes(b"top level, changed\n")
    (src / "nested" / "deeper" / "leaf.bin").unlink()
    (src / "added.txt").write_bytes(b"added\n")
    rclone(depot, "sync", str(src), f"depot:{name}/tree")
    rclone(depot, "check", str(src), f"depot:{name}/tree")
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=name)["Contents"])
    assert keys == sorted(f"tree/{rel}" for rel in read_tree(src))

    dst = tmp_path / "dst"
    rclone(depot, "copy", f"depot:{name}/tree", str(dst))
    assert read_tree(dst) == read_tree(src)

    rclone(depot, "purge", f"depot:{name}")
    expect_error("404", 404, s3.head_bucket, Bucket=name)


def test_rclone_acl_flag(depot, s3, tmp_path):
    """--s3-acl: rclone sends x-amz-acl with every upload; public-read is stored and read anonymously (the
    bucket allows ACLs: ObjectWriter), and rclone's default (private) leaves the object private."""
    name = unique_bucket_name("rclone-acl")
    s3.create_bucket(Bucket=name, ObjectOwnership="ObjectWriter")
    (tmp_path / "pub.txt").write_bytes(b"for everyone\n")
    (tmp_path / "own.txt").write_bytes(b"mine\n")
    # --s3-no-check-bucket: rclone would otherwise send the ACL with a CreateBucket of the existing bucket too.
    rclone(depot, "--s3-no-check-bucket", "--s3-acl", "public-read", "copyto", str(tmp_path / "pub.txt"),
           f"depot:{name}/pub.txt")
    rclone(depot, "copyto", str(tmp_path / "own.txt"), f"depot:{name}/own.txt")
    assert requests.get(f"{depot.endpoint}/{name}/pub.txt", timeout=30).content == b"for everyone\n"
    assert requests.get(f"{depot.endpoint}/{name}/own.txt", timeout=30).status_code == 403
    uris = {g["Grantee"].get("URI") for g in s3.get_object_acl(Bucket=name, Key="pub.txt")["Grants"]}
    assert "http://acs.amazonaws.com/groups/global/AllUsers" in uris
    # Where the bucket enforces ownership, a public ACL is refused and nothing is uploaded.
    enforced = unique_bucket_name("rclone-acl")
    s3.create_bucket(Bucket=enforced)
    out = rclone(depot, "--s3-no-check-bucket", "--s3-acl", "public-read", "copyto", str(tmp_path / "pub.txt"),
                 f"depot:{enforced}/pub.txt", check=False)
    assert out.returncode != 0 and "AccessControlListNotSupported" in out.stderr, out.stderr
    assert "Contents" not in s3.list_objects_v2(Bucket=enforced)
