"""Runs the ```python blocks of a Markdown file, verbatim and in order, in one namespace.

Usage: python run_doc_snippets.py DOC.md   (in a directory where the snippets' files exist)
Exits non-zero, naming the block, if any block raises. check_output.py imports run() to
run them in its own process (tests/python/test_output.sh: one Python per ArviZ major).
"""
import re
import sys
import traceback


def run(path):
    """Runs the blocks of `path`; prints one line per block. Returns None, or what failed."""
    text = open(path, encoding="utf-8").read()
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    if not blocks:
        return f"no python blocks in {path}"
    namespace = {"__name__": "__main__"}
    for i, code in enumerate(blocks, 1):
        first = code.strip().splitlines()[0]
        try:
            exec(compile(code, f"{path}: block {i}", "exec"), namespace)
        except Exception:
            traceback.print_exc()
            return f"block {i} ({first}) failed"
        print(f"block {i} ok: {first}")
    return None


if __name__ == "__main__":
    failed = run(sys.argv[1])
    if failed:
        sys.exit(failed)
