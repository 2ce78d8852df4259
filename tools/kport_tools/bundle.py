#!/usr/bin/env python3
"""Make a Python tool of kport one executable file, as it is installed.

    python3 tools/kport_tools/bundle.py OUT ENTRY PACKAGE_DIR...

OUT is "#!/usr/bin/env python3" followed by a zip (a Python zip
application, as the standard library's zipapp makes): ENTRY (the tool's
script, tools/kport-plot or tools/kport-tune) as __main__.py, and every .py
file of each PACKAGE_DIR under the directory's name (kport_plot/,
kport_tools/), so `import kport_plot` finds them inside the file. The
entries are stored in a fixed order with a fixed date: the same sources
give the same bytes. CMakeLists.txt runs it for `make install` and the
Debian packages, which ship /usr/bin/kport-plot and /usr/bin/kport-tune as
such files."""

import os
import sys
import zipfile

SHEBANG = b"#!/usr/bin/env python3\n"
DATE = (1980, 1, 1, 0, 0, 0)


def bundle(out, entry, packages):
    files = [("__main__.py", entry)]
    for pkg in packages:
        name = os.path.basename(os.path.normpath(pkg))
        files += [("%s/%s" % (name, f), os.path.join(pkg, f)) for f in sorted(os.listdir(pkg)) if f.endswith(".py")]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(SHEBANG)
        with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
            for arcname, path in files:
                info = zipfile.ZipInfo(arcname, date_time=DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                with open(path, "rb") as src:
                    z.writestr(info, src.read())
    os.chmod(tmp, 0o755)
    os.replace(tmp, out)


def main(argv):
    if len(argv) < 2 or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    bundle(argv[0], argv[1], argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
