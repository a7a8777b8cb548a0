"""A standard-library-heavy Python script for the apps suite: JSON encoding
and decoding, regular expressions, collections and big lists, in phases that
allocate and drop a lot of small objects (a script runtime's real work).

    python3 python_stdlib.py [RECORDS]      (default 200000; the smoke size is 20000)
"""
import collections
import json
import re
import sys


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    records = [{"id": i, "name": "user%d" % i, "tags": ["t%d" % (i % 17), "g%d" % (i % 5)],
                "score": (i * 7919) % 1000 / 10.0} for i in range(n)]
    text = json.dumps(records)
    back = json.loads(text)
    word = re.compile(r"user(\d+)")
    ids = [int(m.group(1)) for r in back for m in [word.match(r["name"])] if m]
    tags = collections.Counter(t for r in back for t in r["tags"])
    by_tag = collections.defaultdict(list)
    for r in back:
        by_tag[r["tags"][0]].append(r["score"])
    del records, back, text
    squares = sorted((i * i) % 1000003 for i in ids)
    print(len(ids), len(tags), len(by_tag), squares[len(squares) // 2])


if __name__ == "__main__":
    main()
