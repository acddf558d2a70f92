# bash completion for memtop                                 -*- shell-script -*-
# Installed by `make install` to share/bash-completion/completions/memtop.
# The option names come from `memtop --help` itself (the same table that
# parses them), so this file cannot fall behind the program; only the
# values of a few options are spelled out here.

_memtop()
{
	local cur prev i opts
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	# memtop attach [ID|SOCKET]: the sessions' IDs, or a socket's path.
	if [[ $COMP_CWORD -ge 2 && ${COMP_WORDS[1]} == attach && $cur != -* ]]; then
		local run=${MEMTOP_RUN_DIR:-/run/memtop} s ids=
		for s in "$run"/*.sock; do
			[[ -S $s ]] && s=${s##*/} && ids+=" ${s%.sock}"
		done
		COMPREPLY=($(compgen -W "$ids" -- "$cur"))
		compopt -o filenames 2>/dev/null
		COMPREPLY+=($(compgen -f -- "$cur"))
		return
	fi
	if [[ $COMP_CWORD -eq 1 && $cur != -* ]]; then
		COMPREPLY=($(compgen -W "attach" -- "$cur"))
		return
	fi

	# After "--" comes the command memtop launches.
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			if declare -F _command_offset >/dev/null; then
				_command_offset $((i + 1))
			else
				COMPREPLY=($(compgen -c -- "$cur"))
			fi
			return
		fi
	done

	case $prev in
	-p | --pid)
		COMPREPLY=($(compgen -W "$(ps -e -o pid= 2>/dev/null)" -- "${cur##*,}"))
		return ;;
	--cgroup)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -d -- "${cur:-/sys/fs/cgroup/}"))
		return ;;
	--group)
		COMPREPLY=($(compgen -W "function line stack" -- "$cur"))
		return ;;
	--probe-mode)
		COMPREPLY=($(compgen -W "auto session uretprobe" -- "$cur"))
		return ;;
	--theme)
		COMPREPLY=($(compgen -W "default light high-contrast mono" -- "$cur"))
		compopt -o filenames 2>/dev/null
		COMPREPLY+=($(compgen -f -X '!*.theme' -- "$cur"))
		return ;;
	--max-overhead)
		COMPREPLY=($(compgen -W "none 5 10 20 50" -- "$cur"))
		return ;;
	--output | --folded | --record | --replay)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	-d | --delay | -n | --iterations | --top | --rate | --skip | --stack-copy | \
	--live-max | --max-stacks | --output-every | --push | --push-every | --serve | --record-max)
		return ;; # a value of the user's own
	esac

	if [[ $cur == -* ]]; then
		opts=$("${COMP_WORDS[0]}" --help 2>/dev/null |
			grep -oE -- '(^|[ ,])--?[a-zA-Z][a-z-]*' | tr -d ' ,' | sort -u)
		COMPREPLY=($(compgen -W "$opts --" -- "$cur"))
	fi
}
complete -F _memtop memtop
