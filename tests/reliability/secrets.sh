#!/usr/bin/env bash
# rel_secrets: secrets on the command line and in the environment never
# reach the trace file, `cutrace show` or its JSON.  A traced Python process
# (it opens /dev/nvidiactl of the rig, so a trace is made) gets secret-looking
# options in both forms (--opt=VALUE, --opt VALUE), tokens (hf_, ghp_,
# github_pat_), a URL with user:password, an assignment argument, and
# secret-looking variables that the old, case-sensitive filter let through;
# the RAW trace bytes are grepped for every planted value.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
RIG_ENV=(LD_LIBRARY_PATH="$FAKECUDA_DIR")
[ -n "${PYTHON3:-}" ] && [ -x "$PYTHON3" ] || { echo "skip: no python3"; exit 77; }

args=(--hf-token=hf_Qz8ab1Cd2Ef3Gh4Ij5Kl6Mn7 --password s3cr3tArgA --api-key=s3cr3tArgB
	--client-secret s3cr3tArgC --DB_PASSWORD=s3cr3tArgD --Auth-Token s3cr3tArgE -Dpassword=s3cr3tArgF
	ghp_s3cr3tArgGhp1234567890abcdefXYZ github_pat_11AAAAs3cr3tArgPat_0123456789abcdef
	https://alice:s3cr3tArgUrl@example.org/repo.git HF_TOKEN=s3cr3tArgH
	--model=gpt2 --token-file=/run/tok.txt --keep-going plain-arg)
planted=(hf_Qz8ab1Cd2Ef3Gh4Ij5Kl6Mn7 s3cr3tArgA s3cr3tArgB s3cr3tArgC s3cr3tArgD s3cr3tArgE
	s3cr3tArgF s3cr3tArgGhp s3cr3tArgPat s3cr3tArgUrl s3cr3tArgH)
envs=(CUDA_api_token=s3cr3tEnvA NVIDIA_DB_PASS=s3cr3tEnvB CUDA_PWD=s3cr3tEnvC
	CUDA_AUTH_HEADER=s3cr3tEnvD NVIDIA_CREDS=s3cr3tEnvE CUDA_PRIVATE_NOTE=s3cr3tEnvF
	CUTRACE_Secret=s3cr3tEnvG NVIDIA_Key=s3cr3tEnvH
	CUDA_MIRROR=https://bob:s3cr3tEnvUrl@mirror.example/x CUDA_EXTRA=hf_s3cr3tEnvHfAbcdef0123456789)
planted+=(s3cr3tEnvA s3cr3tEnvB s3cr3tEnvC s3cr3tEnvD s3cr3tEnvE s3cr3tEnvF s3cr3tEnvG s3cr3tEnvH
	s3cr3tEnvUrl s3cr3tEnvHf)
kept=(--model=gpt2 --token-file=/run/tok.txt --keep-going plain-arg --password --client-secret
	'https://' '@example.org/repo.git' CUDA_VISIBLE_DEVICES=0)

mkdir -m 700 "$T/tr"
run3 "$T/s" env "${RIG_ENV[@]}" "${envs[@]}" CUDA_VISIBLE_DEVICES=0 CUTRACE_DIR="$T/tr" \
	LD_PRELOAD="$SHIM_PRELOAD" "$PYTHON3" -c 'import os; os.close(os.open("/dev/nvidiactl", os.O_RDWR)); print("ok")' \
	"${args[@]}"
if ! f=$(one_trace "$T/tr"); then
	bad "no trace (exit $(cat "$T/s.rc"): $(head -2 "$T/s.err" | tr '\n' '|'))"
	finish
fi
"$CUTRACE" show "$f" > "$T/show.txt" 2>&1
"$CUTRACE" show --json "$f" > "$T/show.json" 2>&1
for where in "$f" "$T/show.txt" "$T/show.json"; do
	name=$(basename "$where")
	[ "$where" = "$f" ] && name="the raw trace file"
	found=()
	for s in "${planted[@]}"; do
		grep -aqF -- "$s" "$where" && found+=("$s")
	done
	if [ ${#found[@]} -eq 0 ]; then
		ok "none of the ${#planted[@]} planted secrets in $name"
	else
		bad "${#found[@]} planted secret(s) in $name: ${found[*]}"
	fi
done
missing=()
for k in "${kept[@]}"; do
	grep -aqF -- "$k" "$T/show.txt" || missing+=("$k")
done
if [ ${#missing[@]} -eq 0 ]; then
	ok "what is not secret is kept: ${kept[*]}"
else
	bad "not secret, but missing from show: ${missing[*]}"
fi
grep -m1 'cmdline\|command' "$T/show.txt" | cut -c1-400 | sed 's/^/      /'
finish
