#!/usr/bin/env python3
"""Adds lock entries for platform binaries that the registry reachable here
does not serve (buf ships one optional package per OS/CPU). Without them
`npm ci` refuses the lock as "not in sync"; with them it skips the foreign
platforms as usual.

Also carries `"gypfile": false` of installed packages into their lock entries.
`npm ci` decides from the lock whether to run its default `node-gyp rebuild`
for a package that ships a binding.gyp, and the lock npm writes leaves the
field out: better-sqlite3 13, whose prebuilt binary is in the package, was
compiled from source (and failed where no compiler is installed, e.g. the
image). Run after any `npm install` that rewrote the lock."""
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
    lock["packages"] = packages = dict(sorted(packages.items(), key=lambda kv: (kv[0] != "", kv[0])))

no_gyp = []
for key, entry in packages.items():
    manifest = LOCK.parent / key / "package.json"
    if not key or entry.get("gypfile") is False or not manifest.is_file():
        continue
    if json.loads(manifest.read_text()).get("gypfile") is False:
        entry["gypfile"] = False
        no_gyp.append(key)
if added or no_gyp:
    LOCK.write_text(json.dumps(lock, indent=2) + "\n")
print(f"complete-lock: added {len(added)} platform entries" if added else "complete-lock: no platform entries to add")
if no_gyp:
    print(f"complete-lock: gypfile false in {', '.join(no_gyp)}")
