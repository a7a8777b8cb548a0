"""Inputs for the apps suite's entries, made by their "setup" step in the run's
own temporary directory (the working folder of the setup and of the program),
so that making them is never measured. Deterministic: the same arguments give
the same bytes.

    make_input.py sort-file LINES      input.txt: LINES lines of words and numbers
    make_input.py git-repo COMMITS     repo/: a git repository of COMMITS commits,
                                       each changing 8 of COMMITS/5 source-like
                                       files (10 to 200)
"""
import random
import subprocess
import sys

LINES = 300  # lines of each file at the first commit
WORDS = ("alloc free arena page span heap chunk slab cache purge decay scavenge thread "
         "region segment block bin tcache mmap madvise huge small large").split()


def sort_file(lines):
    rnd = random.Random(12)
    with open("input.txt", "w") as out:
        for _ in range(lines):
            out.write(f"{rnd.choice(WORDS)}-{rnd.randrange(10**9):09d} {rnd.choice(WORDS)} {rnd.random():.6f}\n")


def git_repo(commits):
    """A history written through git fast-import (one process, seconds for
    thousands of commits) rather than one git commit per revision."""
    rnd = random.Random(34)
    files = {f"src/file{i:03d}.c": [f"int f{i}_{j}(int x) {{ return x * {j}; }}\n" for j in range(LINES)]
             for i in range(min(200, max(10, commits // 5)))}
    subprocess.run(["git", "init", "-q", "repo"], check=True)
    stream = []
    for c in range(commits):
        changed = rnd.sample(sorted(files), 8)
        stream.append(f"commit refs/heads/main\nmark :{c + 1}\n"
                      f"committer Bench <bench@example.org> {1700000000 + c * 60} +0000\n")
        msg = f"change {c}: " + " ".join(rnd.choice(WORDS) for _ in range(6)) + "\n"
        stream.append(f"data {len(msg.encode())}\n{msg}")
        if c:
            stream.append(f"from :{c}\n")
        for name in (sorted(files) if c == 0 else changed):
            body = files[name]
            if c:
                at = rnd.randrange(len(body))
                body.insert(at, f"/* {c} {rnd.choice(WORDS)} */ int g{c}_{at}(void) {{ return {rnd.randrange(1000)}; }}\n")
            text = "".join(body)
            stream.append(f"M 100644 inline {name}\ndata {len(text.encode())}\n{text}")
        stream.append("\n")
    subprocess.run(["git", "-C", "repo", "fast-import", "--quiet"], input="".join(stream).encode(), check=True)
    subprocess.run(["git", "-C", "repo", "checkout", "-q", "main"], check=True)


def main(argv):
    kinds = {"sort-file": sort_file, "git-repo": git_repo}
    if len(argv) != 3 or argv[1] not in kinds or not argv[2].isdigit() or int(argv[2]) < 1:
        sys.stderr.write(f"usage: make_input.py {{{'|'.join(kinds)}}} COUNT (a whole number from 1); got {argv[1:]}\n")
        return 2
    kinds[argv[1]](int(argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
