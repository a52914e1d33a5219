# SPDX-License-Identifier: GPL-2.0-only
# bash completion for tlsd, tlsctl and tls-classifier.
#
# Installed once as completions/tlsd, with tlsctl and tls-classifier linked
# to it: bash-completion loads a command's file by its name. Needs nothing
# of bash-completion's own helpers, so it also works sourced by hand.
# The option and command lists here are checked against each program's
# --help by tests/docs/test_completion.sh.

# The word being completed as the user typed it. COMP_WORDS splits at
# COMP_WORDBREAKS, which holds ':', and discovered job names ("dmlc:KEY")
# and addresses have colons: take the text before the cursor instead.
_tlsd_cur()
{
	local line=${COMP_LINE:0:COMP_POINT}
	_tlsd_word=${line##*[[:space:]]}
}

# COMPREPLY from a list of words matching _tlsd_word. bash inserts each
# reply in place of its own word, which begins after the last colon: cut
# what precedes it.
_tlsd_reply()
{
	local w pre=""
	[[ $_tlsd_word == *:* ]] && pre=${_tlsd_word%:*}:
	COMPREPLY=()
	while IFS= read -r w; do
		[[ -n $w ]] && COMPREPLY+=("${w#"$pre"}")
	done < <(compgen -W "$1" -- "$_tlsd_word")
}

_tlsd_files()
{
	compopt -o filenames 2>/dev/null
	mapfile -t COMPREPLY < <(compgen -f -- "$_tlsd_word")
}

_tlsd_interfaces()
{
	local d names=""
	for d in /sys/class/net/*; do
		[[ -e $d ]] && names+=" ${d##*/}"
	done
	_tlsd_reply "$names"
}

# The command word: the first word before the cursor that is neither an
# option nor the value of one of the options in $1 (--opt=VALUE, which
# COMP_WORDBREAKS splits at '=', too).
_tlsd_command()
{
	local i w
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ " $1 " == *" $w "* ]]; then
			[[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
			((i++))
		elif [[ $w != -* ]]; then
			printf '%s' "$w"
			return
		fi
	done
}

# The policies tlsd knows (TLS_POLICY_NAMES in lib/model/policy.h).
_tlsd_policies="fifo one roundrobin bursts"

_tlsd()
{
	local prev=${COMP_WORDS[COMP_CWORD - 1]} names
	_tlsd_cur
	case $prev in
	-c | --config | -s | --control-socket)
		_tlsd_files
		return
		;;
	-i | --interface)
		_tlsd_interfaces
		return
		;;
	-p | --policy)
		_tlsd_reply "$_tlsd_policies"
		return
		;;
	-r | --rate)
		_tlsd_reply "auto"
		return
		;;
	-N | --netns)
		# ip netns's names, or a path such as /proc/PID/ns/net
		names=$(ls /run/netns 2>/dev/null)
		if [[ $_tlsd_word == /* ]]; then
			_tlsd_files
		else
			_tlsd_reply "$names"
		fi
		return
		;;
	-t | --interval)
		return
		;;
	esac
	_tlsd_reply "-c --config -i --interface -p --policy -t --interval -r --rate
		--replace-qdisc --observe -f --foreground -v --verbose -N --netns -s --control-socket
		--cleanup --probe --summary --check-config -V --version -h --help"
}

# The control socket named on the command line (-s PATH, --socket PATH,
# --socket=PATH, which COMP_WORDBREAKS splits into three words), for the
# job names.
_tlsctl_socket()
{
	local i
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-s | --socket)
			[[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
			printf '%s' "${COMP_WORDS[i + 1]}"
			return
			;;
		esac
	done
}

# The names of the jobs tlsd runs, when its socket answers (within a
# second: a completion must not hang on a busy or stopped tlsd).
_tlsctl_jobs()
{
	local sock args=(-j)
	sock=$(_tlsctl_socket)
	[[ -n $sock ]] && args+=(-s "$sock")
	timeout 1 "${COMP_WORDS[0]}" "${args[@]}" jobs 2>/dev/null |
		grep -o '"name": *"[^"]*"' | sed 's/^"name": *"//; s/"$//'
}

_tlsctl()
{
	local prev=${COMP_WORDS[COMP_CWORD - 1]} cmd
	local cmds="status jobs policy stats calibrate metrics help"
	_tlsd_cur
	case $prev in
	-s | --socket)
		_tlsd_files
		return
		;;
	esac
	cmd=$(_tlsd_command "-s --socket")
	case $cmd in
	"")
		if [[ $_tlsd_word == -* ]]; then
			_tlsd_reply "-j --json -p --pretty -s --socket -V --version -h --help"
		else
			_tlsd_reply "$cmds"
		fi
		;;
	help)
		_tlsd_reply "$cmds"
		;;
	policy)
		case $prev in
		interval) ;;
		policy) _tlsd_reply "$_tlsd_policies reset interval --help" ;;
		reset) ;;
		*) _tlsd_reply "interval" ;;
		esac
		;;
	stats)
		if [[ $prev == --direction ]]; then
			_tlsd_reply "pull push"
		elif [[ $_tlsd_word == -* ]]; then
			_tlsd_reply "--csv --follow --direction --help"
		else
			_tlsd_reply "$(_tlsctl_jobs)"
		fi
		;;
	calibrate)
		case $prev in
		--source) _tlsd_reply "solved direct" ;;
		--direction) _tlsd_reply "pull push" ;;
		--format) _tlsd_reply "table json csv spotdnn" ;;
		-o | --types) _tlsd_files ;;
		--param) ;;
		*)
			if [[ $_tlsd_word == -* ]]; then
				_tlsd_reply "--source --direction --format --param -o --merge --types --help"
			elif [[ " ${COMP_WORDS[*]} " == *" --merge "* ]]; then
				_tlsd_files # the exports to merge
			else
				_tlsd_reply "$(_tlsctl_jobs)"
			fi
			;;
		esac
		;;
	metrics)
		case $prev in
		-o) _tlsd_files ;;
		*) _tlsd_reply "--openmetrics -o --help" ;;
		esac
		;;
	status | jobs)
		_tlsd_reply "--help"
		;;
	esac
}

_tls_classifier()
{
	local prev=${COMP_WORDS[COMP_CWORD - 1]} cmd
	_tlsd_cur
	case $prev in
	-i | --interface)
		_tlsd_interfaces
		return
		;;
	-P | --pin-dir | --cgroup)
		compopt -o dirnames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$_tlsd_word")
		return
		;;
	esac
	cmd=$(_tlsd_command "-i --interface -P --pin-dir")
	case $cmd in
	"")
		if [[ $_tlsd_word == -* ]]; then
			_tlsd_reply "-i --interface -P --pin-dir -j --json -v --verbose -V --version -h --help"
		else
			_tlsd_reply "attach detach band job free process pid unprocess unpid
				endpoint unendpoint stats flows watch clock"
		fi
		;;
	attach)
		_tlsd_reply "--gap-us --hold-ms --dscp --cgroup --no-cgroup"
		;;
	esac
}

complete -F _tlsd tlsd
complete -F _tlsctl tlsctl
complete -F _tls_classifier tls-classifier
