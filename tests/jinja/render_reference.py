#!/usr/bin/env python3
"""Reference renderer for test_jinja: renders templates with Python's jinja2 set up as Hugging
Face transformers sets it up for chat templates (ImmutableSandboxedEnvironment, trim_blocks,
lstrip_blocks, loopcontrols and the {% generation %} tag, raise_exception and strftime_now as
globals), with jinja2's own tojson filter unless a case asks for transformers' override.

Usage: render_reference.py JOB.json
JOB.json: {"now": [Y, M, D, h, m, s],
           "cases": [{"id": str, "template": str, "vars": {...}, "transformers_tojson": bool}]}
transformers_tojson selects transformers' override of the tojson filter (json.dumps with
ensure_ascii=False, sort_keys=False, no HTML escaping) instead of jinja2's own.
Prints a JSON list, one entry per case and in the same order:
  {"id": str, "ok": true, "output": str}  or  {"id": str, "ok": false, "error": "Type: message"}
"""
import datetime
import json
import sys
import warnings

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class GenerationTag(Extension):
    """transformers' {% generation %} marker: renders its body through a caller, unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def main():
    warnings.simplefilter("ignore")  # compile-time SyntaxWarnings of generated code
    with open(sys.argv[1], encoding="utf-8") as f:
        job = json.load(f)
    now = datetime.datetime(*job["now"])

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def strftime_now(fmt):
        return now.strftime(fmt)

    def transformers_tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    envs = {}
    for style in (False, True):
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                            extensions=[GenerationTag, loopcontrols])
        env.globals["raise_exception"] = raise_exception
        env.globals["strftime_now"] = strftime_now
        if style:
            env.filters["tojson"] = transformers_tojson
        envs[style] = env

    compiled = {}  # many cases share a template; compile each source once
    results = []
    for case in job["cases"]:
        entry = {"id": case["id"]}
        try:
            style = bool(case.get("transformers_tojson", False))
            key = (style, case["template"])
            if key not in compiled:
                try:
                    compiled[key] = envs[style].from_string(case["template"])
                except Exception as e:
                    compiled[key] = e
            if isinstance(compiled[key], Exception):
                raise compiled[key]
            entry["output"] = compiled[key].render(**case["vars"])
            entry["ok"] = True
        except Exception as e:  # every failure is a result to compare, not a crash
            entry["ok"] = False
            entry["error"] = f"{type(e).__name__}: {e}"
        results.append(entry)
    json.dump(results, sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main()
