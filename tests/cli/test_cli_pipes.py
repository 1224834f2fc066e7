"""The CLI in a pipe, as scripts use it: `benchwarmers` runs in a subprocess behind a real shell pipe, so its
stdout is not a terminal and tables come out as tab-separated lines under a header; `ask` reads its prompt
from stdin; `--json` parses on every listing command (in-process: the same code path, faster)."""

from __future__ import annotations

import os
import re
import subprocess

import orjson
import pytest
import typer
from typer.testing import CliRunner

from benchwarmers import __version__
from benchwarmers.bench.caller import Caller
from benchwarmers.cli.app import app
from tests.support.panels import ask, collection
from tests.support.shell import BENCHWARMERS, shell


def test_piped_tables_are_tab_separated_lines_that_grep_and_cut_find(bench_with_roster, client, fake):
    fake.script("phi-4", status=500)
    described = "Code review: find defects in a diff, with a long description that a table would wrap"
    members = ["llama-3.3-70b", "qwen3-32b", "phi-4"]
    collection(bench_with_roster, "reviewers", members, max_explorers=0, description=described)
    collection(bench_with_roster, "design", ["kimi-k2"], max_explorers=0)
    reply = ask(client, "bench/reviewers", "Is mean([]) safe?\nSecond line").bench
    calls = {s["alias"]: s["call"] for s in reply["seats"]}

    found = shell(f"{BENCHWARMERS} collection list | grep bench/reviewers", bench_with_roster)
    assert found.returncode == 0, found.stderr
    assert found.stdout == (
        "bench/reviewers\tfake/llama-3.3-70b, fake/qwen3-32b, fake/phi-4\t0\tauto\tall\t"
        "Code review: find defects in a diff, with a long description that a table would wrap\n"
    )
    header = shell(f"{BENCHWARMERS} collection list | head -1", bench_with_roster)
    assert header.stdout == "model\tmembers\texplorers\tshape\treply\tdescription\n"

    # `log --owed` lists the call ids still owed a verdict: the ok seats, not the failed one.
    owed = shell(f"{BENCHWARMERS} log --owed | cut -f1,4,5,6", bench_with_roster)
    assert owed.returncode == 0, owed.stderr
    assert owed.stdout == (
        "call\tmodel\tstatus\tverdict\n"
        f"{calls['fake/llama-3.3-70b']}\tfake/llama-3.3-70b\tok\towed\n"
        f"{calls['fake/qwen3-32b']}\tfake/qwen3-32b\tok\towed\n"
    )
    assert "judge one: benchwarmers verdict CALL" in owed.stderr  # the hint is for a person: not in the data
    everything = shell(f"{BENCHWARMERS} log --collection bench/reviewers --limit 5", bench_with_roster).stdout
    assert everything.splitlines()[3].split("\t")[3:] == ["fake/phi-4", "error", "", "Is mean([]) safe? Second line"]


def test_ask_reads_the_prompt_from_stdin(bench_with_roster, fake):
    collection(bench_with_roster, "solo", ["kimi-k2"], max_explorers=0)
    fake.script("kimi-k2", reply="It divides by zero on an empty list.")
    answered = shell(f"printf 'def mean(xs):\\n    return sum(xs) / len(xs)\\n' | {BENCHWARMERS} ask bench/solo",
                     bench_with_roster)  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    assert "It divides by zero on an empty list." in answered.stdout
    call = answered.stdout.splitlines()[-1].split("\t")
    assert call[1:] == ["fake/kimi-k2", "ok"]
    [request] = [r for r in fake.requests if r.path.endswith("/chat/completions")]
    assert request.json["messages"] == [{"role": "user", "content": "def mean(xs):\n    return sum(xs) / len(xs)\n"}]


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63f8ffff3f0005fe02fe0def46b80000000049454e44ae426082"
)


def test_ask_sends_an_image_file_as_a_data_url(bench_with_roster, fake, tmp_path, monkeypatch):
    import base64

    import httpx2

    assert httpx2.patch(f"{bench_with_roster.url}/api/models/fake/kimi-k2", json={"vision": True}).status_code == 200
    collection(bench_with_roster, "eyes", ["kimi-k2"], max_explorers=0)
    image = tmp_path / "chair.png"
    image.write_bytes(PNG)
    monkeypatch.setenv("BENCHWARMERS_URL", bench_with_roster.url)
    result = CliRunner().invoke(app, ["ask", "bench/eyes", "What is this?", "--image", str(image), "--json"])
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout)["bench"]["shape"] == "vision"
    [request] = [r for r in fake.requests if r.path.endswith("/chat/completions")]
    assert request.json["messages"] == [
        {"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{base64.b64encode(PNG).decode()}"}},
        ]}
    ]  # fmt: skip
    refused = CliRunner().invoke(app, ["ask", "bench/eyes", "x", "--image", str(tmp_path / "notes.txt")])
    assert (refused.exit_code, refused.output) == (1, f"error: --image {tmp_path / 'notes.txt'}: give a URL or a .png, "
                                                      ".jpg, .gif or .webp file\n")  # fmt: skip


LISTINGS = [
    ["collection", "list"], ["endpoint", "list"], ["model", "list"], ["key", "list"], ["role", "list"],
    ["shape", "list"], ["decision", "list"], ["alerts"], ["discover", "--limit", "3"], ["leaderboard"], ["report"],
    ["advise"], ["cost"], ["log"], ["gateway", "show"], ["model", "show", "fake/kimi-k2"], ["suite", "list"],
]  # fmt: skip


@pytest.mark.parametrize("command", LISTINGS, ids=" ".join)
def test_json_parses_on_every_listing_command(bench_with_roster, client, monkeypatch, command):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    ask(client, "bench/pair")
    monkeypatch.setenv("BENCHWARMERS_HOME", str(bench_with_roster.settings.home))
    result = CliRunner().invoke(app, [*command, "--json"])
    assert result.exit_code == 0, result.output
    assert isinstance(orjson.loads(result.stdout), list | dict)


def test_version_and_completion():
    runner = CliRunner()
    assert runner.invoke(app, ["--version"]).stdout == f"{__version__}\n"
    shown = runner.invoke(app, ["--show-completion", "bash"], prog_name="benchwarmers")
    assert shown.exit_code == 0
    assert "_BENCHWARMERS_COMPLETE=complete_bash" in shown.stdout
    assert shown.stdout.rstrip().endswith("complete -o default -F _benchwarmers_completion benchwarmers")


def closed_pipe(args: list[str], server) -> subprocess.CompletedProcess:
    """`benchwarmers ARGS` with stdout a pipe whose reader has gone, as after `| head` has read its lines:
    the read end is closed before the command starts, so its first write fails (no race with a reader)."""
    env = {**os.environ, "BENCHWARMERS_HOME": str(server.settings.home), "BENCHWARMERS_URL": server.url}
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [BENCHWARMERS, *args], stdout=write, stderr=subprocess.PIPE, text=True, env=env, timeout=120, check=False
        )
    finally:
        os.close(write)


def test_a_closed_pipe_ends_every_writer_quietly_with_141(bench_with_roster, client, tmp_path):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    call = ask(client, "bench/pair").bench["seats"][0]["call"]
    bench_with_roster.admin(lambda b: b.verdicts.record({"call": call, "useful": True}, Caller()))
    for args in (
        ["export", "calls"],  # bytes on sys.stdout.buffer, inside a read of the log
        ["export", "verdicts"],
        ["export", "calls", "--output", str(tmp_path / "calls.jsonl")],  # rich's console.print
        ["log"],  # a piped table
        ["log", "--json"],
        ["version"],  # typer.echo
    ):
        ended = closed_pipe(args, bench_with_roster)
        assert (ended.returncode, ended.stderr) == (141, ""), args


def _command_paths(command, path=()):
    yield list(path)
    for name, sub in getattr(command, "commands", {}).items():
        yield from _command_paths(sub, (*path, name))


def test_help_shows_no_bool_or_list_metavars_for_options():
    paths = list(_command_paths(typer.main.get_command(app)))
    assert len(paths) > 60
    runner = CliRunner()
    for path in paths:
        shown = runner.invoke(app, [*path, "--help"], terminal_width=200)
        assert shown.exit_code == 0, (path, shown.output)
        options = [line for line in shown.output.splitlines() if line.startswith("│ -")]
        assert [line for line in options if "<bool>" in line or "<list[" in line] == [], path
    member = runner.invoke(app, ["collection", "add", "--help"], terminal_width=200).output
    assert re.search(r"--member +<str> +model alias \(repeat for each", member)
    assert re.search(r"--help +Show this message and exit\.", member)


def test_piped_numbers_are_plain_the_leaderboard_has_a_shape_column_and_the_log_says_it_stopped(
    bench_with_roster, client
):
    collection(bench_with_roster, "pair", ["llama-3.3-70b", "qwen3-32b"], max_explorers=0)
    calls = [ask(client, "bench/pair", f"question {i}").bench["seats"][0]["call"] for i in range(3)]
    bench_with_roster.admin(lambda b: b.verdicts.record({"call": calls[0], "useful": True}, Caller()))

    big = shell(f"{BENCHWARMERS} model list | awk -F'\\t' 'NR > 1 && $2 > 100000 {{print $1}}'", bench_with_roster)
    assert sorted(big.stdout.split()) == ["fake/glm-4.5-air", "fake/kimi-k2", "fake/llama-3.3-70b", "fake/qwen3-coder"]

    board = shell(f"{BENCHWARMERS} leaderboard", bench_with_roster)
    assert board.returncode == 0, board.stderr
    header, *rows = board.stdout.splitlines()
    assert header.split("\t")[:3] == ["shape", "rank", "model"]
    assert {row.split("\t")[0] for row in rows} == {"general"} and len(rows) == 2
    assert "general · 1 judged of 3 panels; best for general: " in board.stderr

    owed = shell(f"{BENCHWARMERS} log --owed --limit 2", bench_with_roster)
    assert owed.returncode == 0, owed.stderr
    assert len(owed.stdout.splitlines()) == 1 + 2 * 2  # the header, two panels of two seats each
    assert "the newest 2 of 3 panels owing a verdict are shown: --limit 3 shows them all\n" in owed.stderr
