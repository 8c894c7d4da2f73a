function __breeze_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __breeze_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __breeze_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __breeze_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __breeze_parse_tokens -S
    set -l unparsed_tokens (__breeze_tokens -pc)
    switch $unparsed_tokens[1]
    case 'breeze'
        __breeze_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'init'
            __breeze_parse_subcommand 1 'json' 'version' 'h/help'
        case 'generate'
            __breeze_parse_subcommand 1 'sha256' 'development-language=' 'pack' 'no-pack' 'json' 'version' 'h/help'
        case 'hash'
            __breeze_parse_subcommand 1 'check' 'sha256' 'chunk-threshold=' 'json' 'version' 'h/help'
        case 'validate'
            __breeze_parse_subcommand 1 'json' 'version' 'h/help'
        case 'package'
            __breeze_parse_subcommand 1 'o/output=' 'meta' 'json' 'version' 'h/help'
        case 'repo'
            __breeze_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'add'
                __breeze_parse_subcommand 2 'name=' 'key=+' 'key-env=' 'expires=' 'json' 'version' 'h/help'
            end
        case 'keygen'
            __breeze_parse_subcommand 1 'json' 'version' 'h/help'
        case 'keys'
            __breeze_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'create'
                __breeze_parse_subcommand 1 'member=+' 'threshold=' 'key=+' 'json' 'version' 'h/help'
            case 'rotate'
                __breeze_parse_subcommand 2 'member=+' 'threshold=' 'key=+' 'json' 'version' 'h/help'
            end
        case 'sign'
            __breeze_parse_subcommand 1 'key=+' 'key-env=' 'expires=' 'identity=' 'sequence=' 'cosign' 'layout=' 'objects=' 'chunk-threshold=' 'json' 'version' 'h/help'
        case 'release'
            __breeze_parse_subcommand 2 'renew' 'key=+' 'key-env=' 'expires=' 'dry-run' 'allow-removals' 'layout=' 'rollout=' 'channel=' 'replace-rollout' 'switch-keys' 'endpoint=' 'region=' 'profile=' 'acl=' 'timeout=' 'create-bucket' 'cache-control-documents=' 'cache-control-content=' 'cache-control-objects=' 'concurrency=' 'json' 'version' 'h/help'
        case 'status'
            __breeze_parse_subcommand 1 'endpoint=' 'region=' 'profile=' 'acl=' 'timeout=' 'json' 'version' 'h/help'
        case 'history'
            __breeze_parse_subcommand 1 'endpoint=' 'region=' 'profile=' 'acl=' 'timeout=' 'json' 'version' 'h/help'
        case 'revert'
            __breeze_parse_subcommand 1 'to=' 'key=+' 'key-env=' 'expires=' 'dry-run' 'endpoint=' 'region=' 'profile=' 'acl=' 'timeout=' 'json' 'version' 'h/help'
        case 'publish'
            __breeze_parse_subcommand 2 'endpoint=' 'region=' 'profile=' 'acl=' 'timeout=' 'create-bucket' 'delete' 'dry-run' 'allow-removals' 'switch-keys' 'layout=' 'objects=' 'gc' 'keep=' 'gc-grace-minutes=' 'concurrency=' 'part-size=' 'cache-control-documents=' 'cache-control-content=' 'cache-control-objects=' 'json' 'version' 'h/help'
        case 'serve'
            __breeze_parse_subcommand 1 'host=' 'port=' 'follow-links' 'quiet' 'idle-timeout=' 'max-connections=' 'cache-control-documents=' 'cache-control-content=' 'cache-control-objects=' 'version' 'h/help'
        case 'plan'
            __breeze_parse_subcommand 1 'env=+' 'json' 'ca-file=' 'version' 'h/help'
        case 'whatsnew'
            __breeze_parse_subcommand 1 'locale=' 'env=+' 'from=' 'to=' 'json' 'version' 'h/help'
        case 'check-update'
            __breeze_parse_subcommand 1 'locale=' 'env=+' 'app-version=' 'json' 'version' 'h/help'
        case 'preview'
            __breeze_parse_subcommand 1 'locale=' 'env=+' 'from=' 'to=' 'o/output=' 'json' 'version' 'h/help'
        case 'sync'
            __breeze_parse_subcommand 2 'env=+' 'store=' 'mirror=+' 'concurrency=' 'pipeline=' 'attempts=' 'header=+' 'bundled=' 'repo=' 'cdn=' 'atomic' 'trusted-key=+' 'identity=' 'keys=' 'key-updates=' 'ca-file=' 'allow-links' 'no-chunk-deltas' 'json' 'version' 'h/help'
        case 'verify'
            __breeze_parse_subcommand 1 'store=' 'json' 'version' 'h/help'
        case 'rollback'
            __breeze_parse_subcommand 1 'store=' 'json' 'version' 'h/help'
        case 'demo'
            __breeze_parse_subcommand 0 'workspace=' 'version' 'h/help'
        case 'help'
            __breeze_parse_subcommand -r 1 'version'
        end
    end
end

function __breeze_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __breeze_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __breeze_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __breeze_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__breeze_tokens -p)
    if test -z "$(__breeze_tokens -t)"
        set -l index (count (__breeze_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'breeze' -f
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'init' -d 'Write a starter .freshair bundle that validates: manifest, release notes, one localized feature.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'generate' -d 'Write or update manifest.json from the folder, inferring conditions from paths, asset catalogs and release notes.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'hash' -d 'Recompute every entry\'s digest and size in manifest.json and its child manifests.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'validate' -d 'Check a bundle (JSON, shapes, digests, conditions, paths, translations, images), or install a package or repository as a device would.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'package' -d 'Pack a folder as a .tgz (or .tar) package, optionally with the .meta an app\'s bundled copy needs.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'repo' -d 'Publish bundles into a repository folder (index.json and <name>-<version>.tar.gz).'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'keygen' -d 'Create an Ed25519 signing key for `breeze sign`; prints the public key apps pin.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'keys' -d 'Write key documents: the keys apps trust and how many must sign, rotated by the keys already trusted.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'sign' -d 'Sign a bundle, a package or a repository as a new release, so apps that pin your key accept it.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'release' -d 'From an edited folder to published content in one step: generate, hash, sign, validate, publish.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'status' -d 'Say what devices get from a destination now: the live release per audience, and its expiry.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'history' -d 'List the releases published to a destination: sequence, time, signers, files, audience, expiry.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'revert' -d 'Publish an earlier release again, as the next release; or stop a staged release.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'publish' -d 'Upload a bundle, package or repository folder to S3 or a served folder: only what changed, the root manifest last.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'serve' -d 'Serve a folder over HTTP with ETag, Last-Modified, 304, Range and the Cache-Control publish sets, for development.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'plan' -d 'List the files a device with this environment would download, with sizes; writes nothing.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'whatsnew' -d 'List the features a user upgrading between two versions sees, with their localized texts.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'check-update' -d 'Say whether a version is up to date, has an update available, or must update.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'preview' -d 'Render the what\'s-new screen as a self-contained HTML page.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'sync' -d 'Keep DIR current from a .freshair bundle, a package, or a repository of bundles.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'verify' -d 'Re-hash the live content of DIR against what was installed; list missing, changed and extra files.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'rollback' -d 'Make the version before the live one live again, on this device (`breeze revert` does it for every device).'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'demo' -d 'Serve a built-in example bundle on loopback and show a sync, an edit, a 304 and an upgrade.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze init" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze init" json' -l 'json' -d 'Print JSON: {"bundle", "files"}.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze init" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze init" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze generate" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze generate" sha256' -l 'sha256' -d 'Use SHA-256 even where a manifest uses SHA-1.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze generate" development-language' -l 'development-language' -d 'The language every device falls back to: its .lproj gets no language condition.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze generate" pack' -l 'pack' -d 'Write the small files into one .tar beside the manifest, so a device\'s first sync takes them in one request.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze generate" no-pack' -l 'no-pack' -d 'Write the small files into one .tar beside the manifest, so a device\'s first sync takes them in one request.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze generate" json' -l 'json' -d 'Print JSON: {"added", "removed", "digestsUpdated", "signaturesRemoved", "pack"}.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze generate" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze generate" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze hash" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze hash" check' -l 'check' -d 'Change nothing; list stale entries and exit 1 if there are any (for CI).'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze hash" sha256' -l 'sha256' -d 'Move SHA-1 manifests to SHA-256.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze hash" chunk-threshold' -l 'chunk-threshold' -d 'Files of at least this many MB get a chunk index (<file>.freshair-chunks), so devices fetch only changed chunks; 0: none.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze hash" json' -l 'json' -d 'Print JSON.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze hash" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze hash" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze validate" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze validate" json' -l 'json' -d 'Print JSON.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze validate" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze validate" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze package" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze package" o output' -l 'output' -s 'o' -d 'The package to write: NAME.tgz, NAME.tar.gz or NAME.tar.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze package" meta' -l 'meta' -d 'Also write OUTPUT.meta with the newest file\'s date as Last-Modified.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze package" json' -l 'json' -d 'Print JSON: {"output", "files", "bytes", "lastModified"}.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze package" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze package" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze repo" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze repo" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze repo" -eq 1' -fa 'add' -d 'Add FOLDER as the next version of bundle NAME; the version moves only when the content changed.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze repo add" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze repo add" -eq 2' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze repo add" name' -l 'name' -d 'The bundle\'s name (default: the folder\'s name).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze repo add"' -l 'key' -d 'A private key file from `breeze keygen`, or - for standard input.' -rF
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze repo add" key-env' -l 'key-env' -d 'The name of an environment variable holding a private key file\'s text.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze repo add" expires' -l 'expires' -d 'Days until devices refuse a newly signed release.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze repo add" json' -l 'json' -d 'Print JSON: {"name", "version", "published", "archive"}.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze repo add" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze repo add" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze keygen" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keygen" json' -l 'json' -d 'Print JSON: {"keyFile", "publicKey"}.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keygen" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keygen" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze keys" -eq 1' -fa 'create' -d 'Write version 1, signed by its own threshold.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze keys" -eq 1' -fa 'rotate' -d 'Write the version after PREVIOUS: add, replace or revoke keys.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze keys create" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys create"' -l 'member' -d 'A key of the new document: a public key (base64) or a key file; default: the --key signers.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys create" threshold' -l 'threshold' -d 'How many distinct member keys must sign content.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys create"' -l 'key' -d 'A private key file that signs this document; repeat.' -rF
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys create" json' -l 'json' -d 'Print JSON: {"output", "version", "threshold", "keys"}.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys create" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys create" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze keys rotate" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze keys rotate" -eq 2' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys rotate"' -l 'member' -d 'A key of the new document: a public key (base64) or a key file; default: the --key signers.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys rotate" threshold' -l 'threshold' -d 'How many distinct member keys must sign content.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys rotate"' -l 'key' -d 'A private key file that signs this document; repeat.' -rF
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys rotate" json' -l 'json' -d 'Print JSON: {"output", "version", "threshold", "keys"}.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys rotate" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze keys rotate" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze sign" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sign"' -l 'key' -d 'A private key file from `breeze keygen`, or - for standard input.' -rF
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sign" key-env' -l 'key-env' -d 'The name of an environment variable holding a private key file\'s text.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sign" expires' -l 'expires' -d 'Days until devices refuse a newly signed release.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sign" identity' -l 'identity' -d 'What is signed (default: the bundle folder\'s, package file\'s or repository folder\'s name, which apps expect by default).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sign" sequence' -l 'sequence' -d 'The sequence to sign (default: the next one).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sign" cosign' -l 'cosign' -d 'Add this key\'s signature to the release as it stands: sequence, expiry and identity stay.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sign" layout' -l 'layout' -d 'A bundle: record this layout in the root manifest before signing (paths, or objects for `breeze publish --layout objects`).' -rfka 'paths objects'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sign" objects' -l 'objects' -d 'With --layout objects: the objects\' folder relative to the bundle\'s, such as ../objects.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sign" chunk-threshold' -l 'chunk-threshold' -d 'A .tar package of at least this many MB gets a chunk index (<package>.freshair-chunks) its document names, so devices fetch only changed chunks; 0: none.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sign" json' -l 'json' -d 'Print JSON.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sign" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sign" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze release" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze release" -eq 2' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" renew' -l 'renew' -d 'Sign the live bundle release again, unchanged, with a new expiry: `breeze release --renew DESTINATION --key K`.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release"' -l 'key' -d 'A private key file from `breeze keygen`, or - for standard input.' -rF
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" key-env' -l 'key-env' -d 'The name of an environment variable holding a private key file\'s text.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" expires' -l 'expires' -d 'Days until devices refuse a newly signed release.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" dry-run' -l 'dry-run' -d 'Say what would be signed and uploaded; change nothing, the source included.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" allow-removals' -l 'allow-removals' -d 'Allow a release that removes every file devices have, more than half of them, or more than 256 MiB.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" layout' -l 'layout' -d 'A bundle\'s layout: paths or objects (see `breeze publish --help`). Default: objects on a new destination, else what is published there.' -rfka 'paths objects'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" rollout' -l 'rollout' -d 'Stage a bundle\'s release: only installs whose rollout bucket (0-99) is below this get it.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" channel' -l 'channel' -d 'Stage a bundle\'s release: only apps that set this channel get it.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" replace-rollout' -l 'replace-rollout' -d 'Replace a staged release running for another channel (or for all channels) with this one.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" switch-keys' -l 'switch-keys' -d 'Publish a release signed only by other keys than the published one.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" endpoint' -l 'endpoint' -d 'An S3-compatible server\'s URL (MinIO, Ceph, R2).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" region' -l 'region' -d 'The bucket\'s region.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" profile' -l 'profile' -d 'The AWS profile whose credentials, region and endpoint_url to use (default: AWS_PROFILE, else default).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" acl' -l 'acl' -d 'S3: a canned ACL for every object, such as public-read for a bucket devices read over HTTP.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" timeout' -l 'timeout' -d 'S3: seconds without an answer before a request is tried again (4 tries in all: a server that never answers is given up on within a minute).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" create-bucket' -l 'create-bucket' -d 'S3: make the bucket first if it does not exist (a new Ceph, MinIO or R2 server has none).'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" cache-control-documents' -l 'cache-control-documents' -d 'Cache-Control for manifest.json, index.json and .sig files.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" cache-control-content' -l 'cache-control-content' -d 'Cache-Control for every other file at a path.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" cache-control-objects' -l 'cache-control-objects' -d 'Cache-Control for objects/<sha256> files (the object layout), which never change.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" concurrency' -l 'concurrency' -d 'Uploads at once.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" json' -l 'json' -d 'Print JSON.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze release" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze status" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze status" endpoint' -l 'endpoint' -d 'An S3-compatible server\'s URL (MinIO, Ceph, R2).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze status" region' -l 'region' -d 'The bucket\'s region.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze status" profile' -l 'profile' -d 'The AWS profile whose credentials, region and endpoint_url to use (default: AWS_PROFILE, else default).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze status" acl' -l 'acl' -d 'S3: a canned ACL for every object, such as public-read for a bucket devices read over HTTP.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze status" timeout' -l 'timeout' -d 'S3: seconds without an answer before a request is tried again (4 tries in all: a server that never answers is given up on within a minute).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze status" json' -l 'json' -d 'Print JSON.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze status" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze status" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze history" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze history" endpoint' -l 'endpoint' -d 'An S3-compatible server\'s URL (MinIO, Ceph, R2).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze history" region' -l 'region' -d 'The bucket\'s region.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze history" profile' -l 'profile' -d 'The AWS profile whose credentials, region and endpoint_url to use (default: AWS_PROFILE, else default).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze history" acl' -l 'acl' -d 'S3: a canned ACL for every object, such as public-read for a bucket devices read over HTTP.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze history" timeout' -l 'timeout' -d 'S3: seconds without an answer before a request is tried again (4 tries in all: a server that never answers is given up on within a minute).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze history" json' -l 'json' -d 'Print JSON: an array of releases, newest first.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze history" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze history" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze revert" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert" to' -l 'to' -d 'The sequence of the release to publish again (default: the one before the current).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert"' -l 'key' -d 'A private key file from `breeze keygen`, or - for standard input.' -rF
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert" key-env' -l 'key-env' -d 'The name of an environment variable holding a private key file\'s text.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert" expires' -l 'expires' -d 'Days until devices refuse a newly signed release.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert" dry-run' -l 'dry-run' -d 'Say what would be published; change nothing.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert" endpoint' -l 'endpoint' -d 'An S3-compatible server\'s URL (MinIO, Ceph, R2).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert" region' -l 'region' -d 'The bucket\'s region.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert" profile' -l 'profile' -d 'The AWS profile whose credentials, region and endpoint_url to use (default: AWS_PROFILE, else default).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert" acl' -l 'acl' -d 'S3: a canned ACL for every object, such as public-read for a bucket devices read over HTTP.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert" timeout' -l 'timeout' -d 'S3: seconds without an answer before a request is tried again (4 tries in all: a server that never answers is given up on within a minute).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert" json' -l 'json' -d 'Print JSON.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze revert" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze publish" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze publish" -eq 2' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" endpoint' -l 'endpoint' -d 'An S3-compatible server\'s URL (MinIO, Ceph, R2).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" region' -l 'region' -d 'The bucket\'s region.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" profile' -l 'profile' -d 'The AWS profile whose credentials, region and endpoint_url to use (default: AWS_PROFILE, else default).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" acl' -l 'acl' -d 'S3: a canned ACL for every object, such as public-read for a bucket devices read over HTTP.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" timeout' -l 'timeout' -d 'S3: seconds without an answer before a request is tried again (4 tries in all: a server that never answers is given up on within a minute).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" create-bucket' -l 'create-bucket' -d 'S3: make the bucket first if it does not exist (a new Ceph, MinIO or R2 server has none).'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" delete' -l 'delete' -d 'After the root manifest is in place, remove files the source no longer has. Devices that read the old manifest a moment before may then fail that one sync and retry.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" dry-run' -l 'dry-run' -d 'Say what would be uploaded and removed; change nothing.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" allow-removals' -l 'allow-removals' -d 'Allow a release that removes every file devices have, more than half of them, or more than 256 MiB.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" switch-keys' -l 'switch-keys' -d 'Publish a release signed only by other keys than the published one.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" layout' -l 'layout' -d 'A bundle\'s layout: paths (as served so far) or objects (objects/<sha256>, cacheable for ever). Default: objects on a new destination (unless the root is signed for paths), else what is published there.' -rfka 'paths objects'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" objects' -l 'objects' -d 'With --layout objects: the objects\' folder, relative to DESTINATION, such as ../objects to share one store between bundles.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" gc' -l 'gc' -d 'With the object layout: remove objects the last --keep versions of every bundle in the store do not need.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" keep' -l 'keep' -d 'Versions whose objects --gc keeps, per bundle.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" gc-grace-minutes' -l 'gc-grace-minutes' -d 'Objects younger than this many minutes are never removed by --gc (another publish may be under way).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" concurrency' -l 'concurrency' -d 'Uploads at once.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" part-size' -l 'part-size' -d 'S3: files larger than this many MiB go up in parts of this size (at least 5).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" cache-control-documents' -l 'cache-control-documents' -d 'Cache-Control for manifest.json, index.json and .sig files.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" cache-control-content' -l 'cache-control-content' -d 'Cache-Control for every other file at a path.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" cache-control-objects' -l 'cache-control-objects' -d 'Cache-Control for objects/<sha256> files (the object layout), which never change.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" json' -l 'json' -d 'Print JSON.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze publish" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze serve" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze serve" host' -l 'host' -d 'The address to bind. Keep 127.0.0.1 unless other machines must reach it.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze serve" port' -l 'port' -d 'The port; 0 picks a free one.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze serve" follow-links' -l 'follow-links' -d 'Serve files that links in the folder point to outside it (refused by default).'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze serve" quiet' -l 'quiet' -d 'Do not log requests.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze serve" idle-timeout' -l 'idle-timeout' -d 'Seconds a connection may stay open with no request before it is closed.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze serve" max-connections' -l 'max-connections' -d 'Connections open at once (default: what the descriptor limit allows); more wait their turn.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze serve" cache-control-documents' -l 'cache-control-documents' -d 'Cache-Control for manifest.json, index.json and .sig files.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze serve" cache-control-content' -l 'cache-control-content' -d 'Cache-Control for every other file at a path.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze serve" cache-control-objects' -l 'cache-control-objects' -d 'Cache-Control for objects/<sha256> files (the object layout), which never change.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze serve" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze serve" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze plan" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze plan"' -l 'env' -d 'Set a condition key.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze plan" json' -l 'json' -d 'Print JSON.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze plan" ca-file' -l 'ca-file' -d 'Trust https servers whose certificates this CA signed (PEM), in place of the system\'s roots: a staging server\'s private CA.' -rfa '(set -l exts \'pem\' \'crt\';for p in (string match -e -- \'*/\' (commandline -t);or printf \n)*.{$exts};printf %s\n $p;end;__fish_complete_directories (commandline -t) \'\')'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze plan" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze plan" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze whatsnew" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze whatsnew" locale' -l 'locale' -d 'The device\'s locale, e.g. fr_FR.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze whatsnew"' -l 'env' -d 'Set a condition key, e.g. --env systemVersion=9.0.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze whatsnew" from' -l 'from' -d 'The version the user had.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze whatsnew" to' -l 'to' -d 'The version the user has now.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze whatsnew" json' -l 'json' -d 'Print JSON.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze whatsnew" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze whatsnew" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze check-update" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze check-update" locale' -l 'locale' -d 'The device\'s locale, e.g. fr_FR.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze check-update"' -l 'env' -d 'Set a condition key, e.g. --env systemVersion=9.0.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze check-update" app-version' -l 'app-version' -d 'The running app version.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze check-update" json' -l 'json' -d 'Print JSON.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze check-update" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze check-update" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze preview" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze preview" locale' -l 'locale' -d 'The device\'s locale, e.g. fr_FR.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze preview"' -l 'env' -d 'Set a condition key, e.g. --env systemVersion=9.0.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze preview" from' -l 'from' -d 'The version the user had.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze preview" to' -l 'to' -d 'The version the user has now.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze preview" o output' -l 'output' -s 'o' -d 'The page to write.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze preview" json' -l 'json' -d 'Print JSON: {"output", "features"}.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze preview" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze preview" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze sync" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze sync" -eq 2' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync"' -l 'env' -d 'Set a condition key, e.g. --env appVersion=1.1.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" store' -l 'store' -d 'The store folder (versions, staging, partial downloads).' -rfa '(__breeze_complete_directories)'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync"' -l 'mirror' -d 'A byte-identical copy of URL, tried in order when URL fails or serves what is refused (repeat for several).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" concurrency' -l 'concurrency' -d 'Connections, and files downloaded at once (small files: --pipeline times as many).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" pipeline' -l 'pipeline' -d 'Small files\' requests sent on a connection before the first is answered (HTTP/1.1 pipelining); 1 sends one at a time, for a proxy that mishandles it.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" attempts' -l 'attempts' -d 'Attempts per request for transient failures (1 = no retry).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync"' -l 'header' -d 'Send a header with every request.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" bundled' -l 'bundled' -d 'A package\'s bundled default copy (with an optional <package>.meta beside it).' -rF
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" repo' -l 'repo' -d 'Sync the repository with this id from the source URL.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" cdn' -l 'cdn' -d 'With --repo: download bundle archives from this URL instead of the source.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" atomic' -l 'atomic' -d 'With --repo: switch every bundle at once (DIR becomes a link to a snapshot of all of them), so they always match.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync"' -l 'trusted-key' -d 'Accept only a root manifest signed by this Ed25519 public key (as `breeze keygen` prints it); repeat for several.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" identity' -l 'identity' -d 'With keys pinned: the name a release must be signed for (default: the URL\'s last path component, as an app expects it).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" keys' -l 'keys' -d 'Trust the keys of this key document (`breeze keys create`) instead of --trusted-key.' -rF
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" key-updates' -l 'key-updates' -d 'With --keys: the folder URL where newer key documents are published (<version>.json).' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" ca-file' -l 'ca-file' -d 'Trust https servers whose certificates this CA signed (PEM), in place of the system\'s roots: a staging server\'s private CA.' -rfa '(set -l exts \'pem\' \'crt\';for p in (string match -e -- \'*/\' (commandline -t);or printf \n)*.{$exts};printf %s\n $p;end;__fish_complete_directories (commandline -t) \'\')'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" allow-links' -l 'allow-links' -d 'Packages and repository archives may hold symbolic links that stay inside (refused by default).'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" no-chunk-deltas' -l 'no-chunk-deltas' -d 'Download changed large files whole, even where a chunk index would let the unchanged chunks be kept.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" json' -l 'json' -d 'Print the summary as JSON.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze sync" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze verify" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze verify" store' -l 'store' -d 'The store folder, if `breeze sync` was given one.' -rfka ''
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze verify" json' -l 'json' -d 'Print the reports as JSON.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze verify" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze verify" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze rollback" -eq 1' -F
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze rollback" store' -l 'store' -d 'The store folder, if `breeze sync` was given one.' -rfa '(__breeze_complete_directories)'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze rollback" json' -l 'json' -d 'Print JSON: {"version", "source"}.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze rollback" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze rollback" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze demo" workspace' -l 'workspace' -d 'Where to write the example, kept afterwards (default: a temporary folder, removed at the end).' -rfa '(__breeze_complete_directories)'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze demo" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze demo" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_flags_or_options "breeze help" version' -l 'version' -d 'Show the version.'
complete -c 'breeze' -n '__breeze_should_offer_completions_for_positional "breeze help" -eq 1' -fa 'init generate hash validate package repo keygen keys sign release status history revert publish serve plan whatsnew check-update preview sync verify rollback demo'
