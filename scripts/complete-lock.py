#!/usr/bin/env python3
"""Adds lock entries for platform binaries that the registry reachable here
does not serve (buf ships one optional package per OS/CPU). Without them
`npm ci` refuses the lock as "not in sync"; with them it skips the foreign
platforms as usual. Run after any `npm install` that rewrote the lock."""
import json
import pathlib

LOCK = pathlib.Path(__file__).resolve().parent.parent / "package-lock.json"
# optional package name suffix -> (os, cpu), as declared by @bufbuild/buf
BUF_PLATFORMS = {
    "darwin-arm64": ("darwin", "arm64"),
    "darwin-x64": ("darwin", "x64"),
    "linux-aarch64": ("linux", "arm64"),
    "linux-armv7": ("linux", "arm"),
    "linux-x64": ("linux", "x64"),
    "win32-arm64": ("win32", "arm64"),
    "win32-x64": ("win32", "x64"),
}

lock = json.loads(LOCK.read_text())
packages = lock["packages"]
template = packages.get("node_modules/@bufbuild/buf")
added = []
if template:
    for suffix, (os_name, cpu) in BUF_PLATFORMS.items():
        key = f"node_modules/@bufbuild/buf-{suffix}"
        if key in packages:
            continue
        packages[key] = {
            "version": template["version"],
            "cpu": [cpu],
            "dev": True,
            "license": "Apache-2.0",
            "optional": True,
            "os": [os_name],
            "engines": {"node": ">=12"},
        }
        added.append(key)
    lock["packages"] = dict(sorted(packages.items(), key=lambda kv: (kv[0] != "", kv[0])))
    LOCK.write_text(json.dumps(lock, indent=2) + "\n")
print(f"complete-lock: added {len(added)} platform entries" if added else "complete-lock: nothing to add")
