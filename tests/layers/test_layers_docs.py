"""The examples in docs/layers.md run, in order, as one script."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "layers.md"


def test_docs_examples_run(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 6
    script = tmp_path / "layers_doc.py"
    script.write_text("\n\n".join(blocks))
    result = subprocess.run(
        [sys.executable, "-W", "ignore", str(script)], capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stderr
    assert "No repository for `SiluAndMul` for configuration mode=" in result.stdout
    assert "['SiluAndMulSmall.forward', 'SiluAndMul.forward', 'SiluAndMul.forward']" in result.stdout
