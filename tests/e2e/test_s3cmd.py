"""s3cmd (Debian's 2.3) against depotd: the everyday commands, path-style, SigV4."""

from __future__ import annotations

import hashlib
import random

from depot_harness import unique_bucket_name


def test_s3cmd_mb_put_ls_get_info_del_rb(depot, s3, tmp_path):
    name = unique_bucket_name("s3cmd")
    out = depot.s3cmd("mb", f"s3://{name}").stdout
    assert f"Bucket 's3://{name}/' created" in out
    assert f"s3://{name}" in depot.s3cmd("ls").stdout

    small = tmp_path / "notes.txt"
    small.write_bytes(b"s3cmd was here\n")
    big = tmp_path / "weights.bin"
    data = random.Random(3).randbytes(3 * 1024 * 1024 + 17)
    big.write_bytes(data)
    depot.s3cmd("put", str(small), f"s3://{name}/docs/notes.txt")
    depot.s3cmd("put", str(big), f"s3://{name}/models/weights.bin")

    listing = depot.s3cmd("ls", "--recursive", f"s3://{name}").stdout.splitlines()
    rows = [tuple(line.split()[-2:]) for line in listing]
    assert rows == [("15", f"s3://{name}/docs/notes.txt"), (str(len(data)), f"s3://{name}/models/weights.bin")]
    assert s3.head_object(Bucket=name, Key="docs/notes.txt")["ContentType"].startswith("text/plain")

    got = tmp_path / "got.bin"
    depot.s3cmd("get", f"s3://{name}/models/weights.bin", str(got))
    assert hashlib.sha256(got.read_bytes()).digest() == hashlib.sha256(data).digest()
    got_small = tmp_path / "got.txt"
    depot.s3cmd("get", f"s3://{name}/docs/notes.txt", str(got_small))
    assert got_small.read_bytes() == b"s3cmd was here\n"

    info = depot.s3cmd("info", f"s3://{name}/models/weights.bin").stdout
    assert f"File size: {len(data)}" in info
    assert f"MD5 sum:   {hashlib.md5(data).hexdigest()}" in info

    out = depot.s3cmd("del", f"s3://{name}/models/weights.bin").stdout
    assert f"delete: 's3://{name}/models/weights.bin'" in out
    depot.s3cmd("del", f"s3://{name}/docs/notes.txt")
    assert depot.s3cmd("ls", "--recursive", f"s3://{name}").stdout.strip() == ""

    out = depot.s3cmd("rb", f"s3://{name}").stdout
    assert f"Bucket 's3://{name}/' removed" in out
    assert f"s3://{name}" not in depot.s3cmd("ls").stdout
