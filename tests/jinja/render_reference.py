#!/usr/bin/env python3
"""Reference renderer for test_jinja: renders templates with Python's jinja2 the way Hugging
Face transformers renders chat templates (ImmutableSandboxedEnvironment, trim_blocks,
lstrip_blocks, loopcontrols and the {% generation %} tag, raise_exception and strftime_now as
globals).

Usage: render_reference.py JOB.json
JOB.json: {"now": [Y, M, D, h, m, s], "cases": [{"id": str, "template": str, "vars": {...}}]}
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

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, loopcontrols])
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now

    compiled = {}  # many cases share a template; compile each source once
    results = []
    for case in job["cases"]:
        entry = {"id": case["id"]}
        try:
            source = case["template"]
            if source not in compiled:
                try:
                    compiled[source] = env.from_string(source)
                except Exception as e:
                    compiled[source] = e
            if isinstance(compiled[source], Exception):
                raise compiled[source]
            entry["output"] = compiled[source].render(**case["vars"])
            entry["ok"] = True
        except Exception as e:  # every failure is a result to compare, not a crash
            entry["ok"] = False
            entry["error"] = f"{type(e).__name__}: {e}"
        results.append(entry)
    json.dump(results, sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main()
