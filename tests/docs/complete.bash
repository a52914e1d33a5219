# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the completion tests (in bash): complete_line LINE calls the
# completion function registered for LINE's command, with COMP_WORDS,
# COMP_CWORD, COMP_LINE and COMP_POINT set as bash sets them for the cursor
# at LINE's end, and prints COMPREPLY sorted, one per line.

complete_line() {
	local line=$1 spec fn tok part
	local -a words=()
	COMP_LINE=$line
	COMP_POINT=${#line}
	# bash splits at blanks and makes each ':' and '=' of COMP_WORDBREAKS
	# a word of its own
	for tok in $line; do
		while [[ $tok == *[:=]* ]]; do
			part=${tok%%[:=]*}
			[[ -n $part ]] && words+=("$part")
			tok=${tok#"$part"}
			words+=("${tok:0:1}")
			tok=${tok:1}
		done
		[[ -n $tok ]] && words+=("$tok")
	done
	# a trailing blank starts a new, empty word
	[[ $line == *" " ]] && words+=("")
	COMP_WORDS=("${words[@]}")
	COMP_CWORD=$((${#words[@]} - 1))
	spec=$(complete -p "${words[0]}" 2>/dev/null) || {
		echo "no completion for ${words[0]}"
		return 1
	}
	fn=${spec#*-F }
	fn=${fn%% *}
	COMPREPLY=()
	"$fn" "${words[0]}" "${words[COMP_CWORD]}" "${words[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sort
}

# expect_completion LINE WORD...: the replies are exactly these words
expect_completion() {
	local line=$1 got want
	shift
	got=$(complete_line "$line" | tr '\n' ' ')
	want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	if [[ "$got" != "$want" ]]; then
		echo "FAIL: completing '$line': got [$got], expected [$want]"
		return 1
	fi
	echo "ok: '$line' -> $got"
}
