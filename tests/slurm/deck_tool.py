#!/usr/bin/python3
"""Small edits of input decks for the job-script tests.

    deck_tool.py problem DECK                  print the deck's problem type
    deck_tool.py scale DECK OUT FACTOR         every `steps` key (and output.every,
                                               output.checkpoint_every) times FACTOR: the
                                               same problem, FACTOR times longer
    deck_tool.py set DECK OUT KEY=VALUE...     set dotted keys (VALUE parsed as YAML)

The copy is plain YAML without the comments; relative output paths stay relative to the
directory the run is started in.
"""
import sys

import yaml


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def save(deck, path):
    with open(path, "w") as f:
        yaml.safe_dump(deck, f, sort_keys=False)


def scale(node, factor):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "steps" and isinstance(value, int):
                node[key] = value * factor
            else:
                scale(value, factor)
    elif isinstance(node, list):
        for value in node:
            scale(value, factor)


def main(argv):
    if len(argv) >= 2 and argv[0] == "problem":
        print(load(argv[1]).get("problem", ""))
        return 0
    if len(argv) == 4 and argv[0] == "scale":
        deck, factor = load(argv[1]), int(argv[3])
        scale({k: v for k, v in deck.items() if k != "output"}, factor)
        out = deck.get("output") or {}
        for key in ("every", "checkpoint_every"):
            if isinstance(out.get(key), int) and out[key] > 0:
                out[key] *= factor
        save(deck, argv[2])
        return 0
    if len(argv) >= 4 and argv[0] == "set":
        deck = load(argv[1])
        for assignment in argv[3:]:
            key, value = assignment.split("=", 1)
            node = deck
            parts = key.split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = yaml.safe_load(value)
        save(deck, argv[2])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
