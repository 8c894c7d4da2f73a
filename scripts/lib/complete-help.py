#!/usr/bin/env python3
"""Makes `breeze help <TAB>` offer breeze's commands in the generated completion scripts.

    scripts/lib/complete-help.py FOLDER

FOLDER holds the scripts as scripts/generate-cli-files lays them out. The command names are
read from the bash script's own list for `breeze <TAB>`, so they follow the CLI. Fails when a
script no longer has the shape this edits (a new swift-argument-parser, say), rather than
leaving `help` uncompleted unnoticed.
"""
import os
import re
import sys


def edit(path, old, new):
    with open(path) as file:
        text = file.read()
    if old not in text:
        sys.exit(f"scripts/lib/complete-help.py: {path} has no {old!r}: the generator changed; update this script")
    with open(path, "w") as file:
        file.write(text.replace(old, new, 1))


def main():
    folder = sys.argv[1]
    bash = os.path.join(folder, "bash-completion/completions/breeze")
    with open(bash) as file:
        found = re.search(r"compgen -W '([a-z -]+ help)' -- \"\$\{cur\}\"", file.read())
    if not found:
        sys.exit("scripts/lib/complete-help.py: no command list in the bash script")
    names = [name for name in found.group(1).split() if name != "help"]
    words = " ".join(names)
    edit(bash, "_breeze_help() {\n    repeating_flags=()\n    non_repeating_flags=(--version)\n"
         "    repeating_options=()\n    non_repeating_options=()\n    __breeze_offer_flags_options -1\n",
         "_breeze_help() {\n    repeating_flags=()\n    non_repeating_flags=(--version)\n"
         "    repeating_options=()\n    non_repeating_options=()\n    __breeze_offer_flags_options -1\n"
         f"    COMPREPLY+=($(compgen -W '{words}' -- \"${{cur}}\"))\n")
    edit(os.path.join(folder, "zsh/site-functions/_breeze"),
         "_breeze_help() {\n    local -i ret=1\n    local -ar arg_specs=(\n        '*:subcommands:'\n",
         f"_breeze_help() {{\n    local -i ret=1\n    local -ar arg_specs=(\n        '*:subcommands:({words})'\n")
    fish = os.path.join(folder, "fish/vendor_completions.d/breeze.fish")
    with open(fish, "a") as file:
        file.write(f"complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional \"breeze help\" -eq 1' "
                   f"-fa '{words}'\n")


main()
