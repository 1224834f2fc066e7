from tests.test_evidence_gateway import *  # noqa

def test_peek(bench_with_roster, judged_trio, cli):
    print(cli("leaderboard", "--shape", "review")[1])
