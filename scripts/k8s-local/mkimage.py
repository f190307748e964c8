#!/usr/bin/env python3
"""Writes a docker-archive tarball (one layer) from a root filesystem folder, for `ctr images import`.

usage: mkimage.py ROOTFS NAME:TAG OUT.tar [ENTRYPOINT-JSON]
"""

import hashlib
import json
import os
import sys
import tarfile


def main() -> None:
    rootfs, ref, out = sys.argv[1:4]
    entry = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
    layer = out + ".layer"
    with tarfile.open(layer, "w", format=tarfile.PAX_FORMAT) as t:
        for name in sorted(os.listdir(rootfs)):
            t.add(os.path.join(rootfs, name), arcname=name)
    digest = hashlib.sha256()
    with open(layer, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    diff = digest.hexdigest()
    env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
    config = {"Env": env, **({"Entrypoint": entry} if entry else {})}
    cfg = {"architecture": "amd64", "os": "linux", "config": config,
           "rootfs": {"type": "layers", "diff_ids": ["sha256:" + diff]}}
    cfg_bytes = json.dumps(cfg).encode()
    cfg_name = hashlib.sha256(cfg_bytes).hexdigest() + ".json"
    manifest = [{"Config": cfg_name, "RepoTags": [ref], "Layers": [diff + "/layer.tar"]}]
    with tarfile.open(out, "w") as t:
        add_bytes(t, cfg_name, cfg_bytes)
        t.add(layer, arcname=diff + "/layer.tar")
        add_bytes(t, "manifest.json", json.dumps(manifest).encode())
    os.remove(layer)


def add_bytes(t: tarfile.TarFile, name: str, data: bytes) -> None:
    import io

    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    t.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    main()
