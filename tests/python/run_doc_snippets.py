"""Runs the ```python blocks of a Markdown file, verbatim and in order, in one namespace.

Usage: python run_doc_snippets.py DOC.md   (in a directory where the snippets' files exist)
Exits non-zero, naming the block, if any block raises.
"""
import re
import sys
import traceback

text = open(sys.argv[1], encoding="utf-8").read()
blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
if not blocks:
    sys.exit(f"no python blocks in {sys.argv[1]}")
namespace = {"__name__": "__main__"}
for i, code in enumerate(blocks, 1):
    first = code.strip().splitlines()[0]
    try:
        exec(compile(code, f"{sys.argv[1]}: block {i}", "exec"), namespace)
    except Exception:
        traceback.print_exc()
        sys.exit(f"block {i} ({first}) failed")
    print(f"block {i} ok: {first}")
