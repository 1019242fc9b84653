"""The ``kafka-ref`` command: a command line it cannot run is one clean line and a non-zero exit.

The table of the learner's-experience issue: each case used to print a traceback (46 to 79
lines), run with a nonsense value ("era 9.9") or silently ignore a flag.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka_ref.cli import main

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("argv, message", [
    (["sim", "--ibp", "banana"],
     "kafka-ref sim: error: inter.broker.protocol.version 'banana' is not a version; use an era "
     "(0.10.2, 0.11, 2.0, default) or a Kafka release such as 2.8 or 0.10.1"),
    (["sim", "--ibp", "9.9"],
     "kafka-ref sim: error: inter.broker.protocol.version '9.9' is not a version; use an era "
     "(0.10.2, 0.11, 2.0, default) or a Kafka release such as 2.8 or 0.10.1"),
    (["sim", "--ibp", "0.9.0"],
     "kafka-ref sim: error: inter.broker.protocol.version '0.9.0' is outside the releases the simulator "
     "runs (0.10.0 to 3.8); use an era (0.10.2, 0.11, 2.0, default) or one of those versions"),
    (["sim", "--seeds", "-3"], "kafka-ref sim: error: argument --seeds: must be at least 1, got -3 (see kafka-ref sim --help)"),
    (["sim", "--seeds", "0"], "kafka-ref sim: error: argument --seeds: must be at least 1, got 0 (see kafka-ref sim --help)"),
    (["sim", "--duration", "-5"],
     "kafka-ref sim: error: argument --duration: must be a positive number of seconds, got -5 (see kafka-ref sim --help)"),
    (["sim", "--trace"], "kafka-ref sim: error: --trace replays one run: give it --seed N"),
    (["sim", "--svg", "x.svg"], "kafka-ref sim: error: --svg replays one run: give it --seed N"),
    (["sim", "--seed", "3", "--seeds", "5"], "kafka-ref sim: error: --seed replays one seed and --seeds runs many: give one of them"),
    (["sim", "--jobs", "0"], "kafka-ref sim: error: argument --jobs: must be at least 1, got 0 (see kafka-ref sim --help)"),
    (["sim", "--scenario", "nope"],
     "kafka-ref sim: error: unknown scenario 'nope'; available: leader-failover, back-to-back-failures, "
     "partition-leader-away, controller-failover, rolling-restart, kip101, kip279, last-replica-standing, client-failover, all"),
    (["sim", "--metadata-mode", "kraft", "--ibp", "2.0"],
     "kafka-ref sim: error: inter.broker.protocol.version 2.0 predates KRaft (3.0): its eras run in 'zk' mode only"),
    (["sim", "--controllers", "3"],
     "kafka-ref sim: error: controllers 3: a controller quorum runs in metadata_mode 'kraft' only"),
    (["sim", "--metadata-mode", "kraft", "--controllers", "0"],
     "kafka-ref sim: error: argument --controllers: must be at least 1, got 0 (see kafka-ref sim --help)"),
    (["sweep", "--grid", "bogus"],
     "kafka-ref sweep: error: no grid 'bogus' (known: ['default', 'quick', 'scale'], or give a .toml path)"),
    (["demo", "--seed", "x"], "kafka-ref demo: error: argument --seed: expected a whole number, got 'x' (see kafka-ref demo --help)"),
])
def test_bad_command_line_is_one_line_and_exit_2(argv, message, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors exit from parse_args
        code = exc.code
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert captured.err == message + "\n"


def test_help_texts_show_defaults():
    from kafka_ref.cli import build_parser

    sim = build_parser()._subparsers._group_actions[0].choices["sim"]
    helps = {a.dest: a.help for a in sim._actions}
    assert helps["first_seed"] == "the first seed of a --seeds run (default: %(default)s)"
    for dest in ("scenario", "seeds", "first_seed", "ibp", "jobs", "duration", "metadata_mode"):
        assert "default: " in helps[dest], dest
    assert "no progress bar" in helps["no_progress"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _catches_sigint(pid: int) -> bool:
    """Whether the process has a handler for SIGINT (Linux: the SigCgt mask in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # no /proc: fall back to the fixed pause above
    mask = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return bool(mask & (1 << (signal.SIGINT - 1)))


def _workers_started(pid: int) -> bool:
    """Whether the simulation's worker processes exist (Linux /proc; elsewhere assume so)."""
    try:
        return len(Path(f"/proc/{pid}/task/{pid}/children").read_text().split()) >= 2
    except OSError:
        return True


def test_ctrl_c_during_sim_is_one_line_and_exit_130():
    """Ctrl-C with two worker processes: no traceback from the parent or the workers."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_ref.cli", "sim", "--seeds", "20", "--jobs", "2"], cwd=REPO, env=_env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # A shell without job control starts background commands with SIGINT ignored; undo that.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # Wait until Python has installed its Ctrl-C handler (a loaded machine starts slowly), then
    # give the run a moment to be under way.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (_catches_sigint(proc.pid) and _workers_started(proc.pid)):
        time.sleep(0.1)
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert out == ""
    assert err == "kafka-ref sim: interrupted\n"


def test_demo_twice_gives_identical_output():
    """Lines at the same virtual instant come out in the same order on every run (seeded schedule),
    whatever the hash seed of the process."""
    outputs = []
    for hash_seed in ("1", "2"):
        result = subprocess.run([sys.executable, "-m", "kafka_ref.cli", "demo"], cwd=REPO,
                                env={**_env(), "PYTHONHASHSEED": hash_seed}, capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    assert "== done at t=" in outputs[0]
    assert len(outputs[0].splitlines()) > 30
