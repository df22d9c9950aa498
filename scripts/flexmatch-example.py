#!/usr/bin/env python3
"""Writes scenarios/fit/flexmatch-events.jsonl: an mmsim ticket log (from
`mmsim trace RUN --ticket-log`) re-told as AWS GameLift FlexMatch's event
stream, one event per line in the shape FlexMatch's event reference
documents (MatchmakingSearching, PotentialMatchCreated,
MatchmakingSucceeded, MatchmakingCancelled), so that `mmsim fit` reads a
FlexMatch stream whose generator is known. Not captured from a live
service. Player ratings ride in each player's `playerAttributes` (the
StartMatchmaking request's Player shape), which the events themselves do
not carry.

    mmsim run scenarios/fit/truth-1v1.toml --set arrivals.rate_per_s=0.1 \\
        --set run.duration='"1h"' --out output/flex-truth --tables none
    mmsim trace output/flex-truth --ticket-log --out output/flex-truth.csv
    scripts/flexmatch-example.py output/flex-truth.csv > scenarios/fit/flexmatch-events.jsonl
"""
import csv
import datetime
import json
import sys

EPOCH = datetime.datetime(2026, 11, 2, tzinfo=datetime.timezone.utc)
ARN = "arn:aws:gamelift:us-west-2:123456789012:matchmakingconfiguration/SampleConfiguration"


def iso(s):
    t = EPOCH + datetime.timedelta(milliseconds=round(float(s) * 1000))
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def main(path):
    tickets = {}
    for row in csv.DictReader(open(path)):
        t = tickets.setdefault(row["ticket"], {"row": row, "players": []})
        t["players"].append((row["player"], float(row["rating"])))
    events = []
    seq = 0

    def event(at, detail):
        nonlocal seq
        seq += 1
        events.append((float(at), seq, {
            "version": "0",
            "id": f"00000000-0000-4000-8000-{seq:012d}",
            "detail-type": "GameLift Matchmaking Event",
            "source": "aws.gamelift",
            "account": "123456789012",
            "time": iso(at),
            "region": "us-west-2",
            "resources": [ARN],
            "detail": detail,
        }))

    def ticket_json(tid, attrs=False, team=None):
        t = tickets[tid]
        players = []
        for pid, rating in t["players"]:
            p = {"playerId": f"player-{pid}"}
            if attrs:
                p["playerAttributes"] = {"skill": {"N": rating}}
            if team is not None:
                p["team"] = team
            players.append(p)
        return {"ticketId": f"ticket-{tid}", "startTime": iso(t["row"]["enqueue_s"]), "players": players}

    matches = {}
    for tid, t in tickets.items():
        r = t["row"]
        event(r["enqueue_s"], {
            "tickets": [ticket_json(tid, attrs=True)],
            "estimatedWaitMillis": "NOT_AVAILABLE",
            "type": "MatchmakingSearching",
            "gameSessionInfo": {"players": [{"playerId": f"player-{p}"} for p, _ in t["players"]]},
        })
        if r["reason"] == "matched":
            matches.setdefault(r["match"], []).append(tid)
        elif r["reason"] == "abandoned":
            event(r["leave_s"], {
                "reason": "Cancelled",
                "tickets": [ticket_json(tid)],
                "ruleEvaluationMetrics": [],
                "type": "MatchmakingCancelled",
                "message": "Cancelled by request.",
                "gameSessionInfo": {"players": [{"playerId": f"player-{p}"} for p, _ in t["players"]]},
            })
    for mid, tids in matches.items():
        at = tickets[tids[0]]["row"]["leave_s"]
        teamed = [ticket_json(tid, team=f"team{i}") for i, tid in enumerate(tids)]
        players = [p for t in teamed for p in t["players"]]
        event(at, {
            "tickets": teamed,
            "acceptanceTimeout": 600,
            "ruleEvaluationMetrics": [],
            "acceptanceRequired": False,
            "type": "PotentialMatchCreated",
            "gameSessionInfo": {"players": players},
            "matchId": f"match-{mid}",
        })
        event(at, {
            "tickets": teamed,
            "type": "MatchmakingSucceeded",
            "gameSessionInfo": {
                "gameSessionArn": f"arn:aws:gamelift:us-west-2::gamesession/fleet-1/match-{mid}",
                "ipAddress": "192.0.2.1",
                "port": 7777,
                "players": [dict(p, playerSessionId=f"psess-{mid}-{i}") for i, p in enumerate(players)],
            },
            "matchId": f"match-{mid}",
        })
    for _, _, e in sorted(events, key=lambda e: (e[0], e[1])):
        print(json.dumps(e, separators=(",", ":")))


if __name__ == "__main__":
    main(sys.argv[1])
