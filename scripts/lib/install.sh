# Sourced by the project's scripts: `install_missing TEST:PACKAGE …` installs, from Debian, each
# PACKAGE whose TEST fails. A TEST is an absolute path that must exist, or a command on PATH.
# Debian's own service start-up is blocked while installing (nginx would otherwise start on :80).
install_missing() {
    local missing=() pair test package
    for pair in "$@"; do
        test="${pair%%:*}"
        package="${pair#*:}"
        if [[ "$test" == /* ]]; then
            [ -e "$test" ] || missing+=("$package")
        else
            command -v "$test" >/dev/null 2>&1 || missing+=("$package")
        fi
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    echo "$(basename "$0"): installing ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    local made_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
        $sudo chmod +x /usr/sbin/policy-rc.d
        made_policy=1
    fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    [ -z "$made_policy" ] || $sudo rm -f /usr/sbin/policy-rc.d
}
