import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_keeps_exactly_two_setup_commands():
    text = README.read_text(encoding="utf-8")
    commands = re.findall(r"```bash\n(.*?)\n```", text, flags=re.S)
    assert commands == [
        'python -m pip install -e ".[all]" && bayescv demo',
        'python -m pip install -e ".[all,test]" && python -m pytest',
    ]


def test_readme_example_runs(tmp_path, monkeypatch, capsys):
    (code,) = re.findall(r"```python\n(.*?)\n```", README.read_text(encoding="utf-8"), flags=re.S)
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(code, str(README), "exec"), namespace)
    first_line = capsys.readouterr().out.splitlines()[0]
    cvs_error, cvr_error = map(float, first_line.split())
    # the printed CV errors are the means of the two loss tables it built
    assert cvs_error == float(namespace["cvs"]["loss"].mean())
    assert cvr_error == float(namespace["cvr"]["loss"].mean())
    assert int(namespace["stats"]["n"].sum()) == 5748
    assert (tmp_path / "cvs.nc").stat().st_size > 0
    # the intervals are centred on the CVS error and target the fixed-source CV error
    ci = namespace["ci"]
    assert np.allclose(ci["estimate"], cvs_error, rtol=1e-12, atol=0)
    assert (ci["lower"] < ci["estimate"]).all()
    assert (ci["estimate"] < ci["upper"]).all()
    assert list(ci["target"].values) == ["expected_cv", "expected_cv"]
