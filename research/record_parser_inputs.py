"""A pytest plugin for compare_json_repair.py: records every input `parse_json_lenient` gets while
tests run, one JSON string a line, to $REC_OUT (inputs that are not text are skipped)."""
import atexit
import json
import os

import wmkit.envs.textgame as tg
import wmkit.rewards.textgame as rt

_original = tg.parse_json_lenient
_seen = []


def _recording(text):
    if isinstance(text, str):
        _seen.append(text)
    return _original(text)


tg.parse_json_lenient = rt.parse_json_lenient = _recording


@atexit.register
def _dump():
    with open(os.environ.get("REC_OUT", "parser_inputs.jsonl"), "w") as f:
        f.writelines(json.dumps(text) + "\n" for text in _seen)
