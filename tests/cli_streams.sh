#!/usr/bin/env bash
# Streams and outputs that are not regular files, through the real binary:
#   - `cat x | pegasos predict m -` equals `pegasos predict m x` for LIBSVM, CSV,
#     JSONL, JSONL.gz and TSV; named pipes and /dev/stdin read like files; train,
#     eval and featurize read standard input too;
#   - --output to a FIFO streams to its reader and leaves a FIFO; to a device node
#     leaves a device; > /dev/full fails loudly; a closed pipe ends quietly;
#   - --line-buffered answers each line before the next one is written.
# Usage: bash tests/cli_streams.sh PEGASOS_BINARY
set -uo pipefail
P=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
same() { cmp -s "$1" "$2" || fail "$3: $1 and $2 differ"; }

# Data: a linearly separable LIBSVM set, the same as CSV with a header, and raw text.
awk 'BEGIN { srand(7); for (i = 0; i < 3000; i++) { y = (i % 2) ? 1 : -1; printf "%d 1:%.3f 2:%.3f 5:%.2f\n", y, y + rand() - 0.5, rand(), rand() } }' > d.svm
awk 'BEGIN { print "y,a,b"; srand(8); for (i = 0; i < 3000; i++) { y = (i % 2) ? 1 : -1; printf "%d,%.3f,%.3f\n", y, y + rand() - 0.5, rand() } }' > d.csv
awk 'BEGIN { for (i = 0; i < 400; i++) { s = i % 2; printf "{\"id\": \"m%d\", \"label\": \"%s\", \"text\": \"%s %d\"}\n", i, s ? "spam" : "ham", s ? "win cheap money now" : "meeting notes for the team", i % 13 } }' > d.jsonl
gzip -c d.jsonl > d.jsonl.gz
awk 'BEGIN { for (i = 0; i < 400; i++) { s = i % 2; printf "%s\t%s %d\n", s ? "spam" : "ham", s ? "win cheap money now" : "meeting notes for the team", i % 13 } }' > d.tsv
"$P" train -q d.svm m.json || fail "train d.svm"
"$P" train -q d.csv c.json || fail "train d.csv"
"$P" train -q d.jsonl t.json || fail "train d.jsonl"
"$P" train -q --set format=text_tsv d.tsv tsv.json || fail "train d.tsv"

# Standard input, byte for byte the same as the file.
for pair in "m.json d.svm" "c.json d.csv" "t.json d.jsonl" "t.json d.jsonl.gz" "tsv.json d.tsv"; do
  set -- $pair
  "$P" predict "$1" "$2" > file.out || fail "predict $2"
  "$P" predict "$1" - < "$2" > stdin.out || fail "predict - < $2"
  cat "$2" | "$P" predict "$1" - > pipe.out || fail "cat $2 | predict -"
  "$P" predict "$1" /dev/stdin < "$2" > devstdin.out || fail "predict /dev/stdin < $2"
  mkfifo in.fifo
  cat "$2" > in.fifo &
  writer=$!
  timeout 60 "$P" predict "$1" in.fifo > fifo.out || fail "predict FIFO $2"
  kill $writer 2> /dev/null  # blocked forever if predict never opened the FIFO
  wait $writer 2> /dev/null
  rm -f in.fifo
  [ -s file.out ] || fail "predict $2 wrote nothing"
  same file.out stdin.out "stdin $2"
  same file.out pipe.out "pipe $2"
  same file.out devstdin.out "/dev/stdin $2"
  same file.out fifo.out "named pipe $2"
done
# LIBSVM rows for a text model: refused from a pipe as from the file (they were scored as documents).
"$P" predict t.json d.svm > /dev/null 2>&1 && fail "predict text model on d.svm exited 0"
head -3 d.svm | "$P" predict t.json - > /dev/null 2> libsvm_pipe.err && fail "head d.svm | predict text model - exited 0"
grep -q "numeric data" libsvm_pipe.err || fail "libsvm rows on a pipe said: $(cat libsvm_pipe.err)"
cat d.svm | "$P" train -q - m_stdin.json && same m.json m_stdin.json "train from standard input"
"$P" eval m.json d.svm > eval_file.out && cat d.svm | "$P" eval m.json - > eval_stdin.out || fail "eval"
same eval_file.out eval_stdin.out "eval from standard input"
"$P" featurize -q d.jsonl f.svm && cat d.jsonl | "$P" featurize -q --set format=jsonl - - > f_stdin.svm || fail "featurize"
same f.svm f_stdin.svm "featurize standard input to standard output"
printf '\n\n' | "$P" predict m.json - > /dev/null 2> empty.err
[ $? -eq 2 ] && grep -q "standard input: no examples" empty.err || fail "empty standard input: $(cat empty.err)"

# Outputs in place: a FIFO stays a FIFO and its reader gets every line.
"$P" predict m.json d.svm > file.out
mkfifo out.fifo
cat out.fifo > from_fifo.out &
reader=$!
timeout 60 "$P" predict m.json d.svm --output out.fifo || fail "predict --output FIFO"
# The reader drains the pipe and ends at EOF; it is blocked forever only if
# predict never opened the FIFO, so it is killed after 30 s, not at once
# (killing it at once could lose lines still in the pipe on a loaded machine).
for _ in $(seq 300); do kill -0 $reader 2> /dev/null || break; sleep 0.1; done
kill $reader 2> /dev/null
wait $reader 2> /dev/null
[ -p out.fifo ] || fail "out.fifo is no longer a FIFO"
same file.out from_fifo.out "--output FIFO"
ls | grep -q 'tmp-' && fail "temporary files left: $(ls)"
if mknod null.dev c 1 3 2> /dev/null; then
  "$P" predict m.json d.svm --output null.dev || fail "predict --output device"
  "$P" eval m.json d.svm --json null.dev > /dev/null || fail "eval --json device"
  [ -c null.dev ] || fail "null.dev is no longer a character device"
else
  echo "note: mknod not permitted here; device node case skipped" >&2
fi

# /dev/stdout, /dev/fd/N: the descriptor the shell opened, written through in
# place (with >> the output is appended; the file was once replaced instead).
echo OLD > appended.out
"$P" predict m.json d.svm --output /dev/stdout >> appended.out || fail "predict --output /dev/stdout >>"
{ echo OLD; cat file.out; } > appended.want
same appended.out appended.want "predict --output /dev/stdout >> (appended)"
echo OLD > fd3.out
"$P" predict m.json d.svm --output /dev/fd/3 3>> fd3.out || fail "predict --output /dev/fd/3"
same fd3.out appended.want "predict --output /dev/fd/3 3>> (appended)"
"$P" predict m.json d.svm --output /dev/fd/9 2> fd9.err && fail "--output /dev/fd/9 (not open) exited 0"
grep -q "/dev/fd/9" fd9.err || fail "--output /dev/fd/9 said: $(cat fd9.err)"

# Write errors are errors.
for cmd in "predict m.json d.svm" "eval m.json d.svm" "predict m.json d.svm -o /dev/full" "eval m.json d.svm --json /dev/full" \
           "featurize -q d.jsonl /dev/full" "--help" "train --help" "--version" "--man" "train --cv 2 d.svm"; do
  "$P" $cmd > /dev/full 2> full.err
  code=$?
  [ $code -ne 0 ] || fail "'$cmd > /dev/full' exited 0"
  # The reason is named, not only "write failed".
  grep -q "No space left on device" full.err || fail "'$cmd > /dev/full' said: $(cat full.err)"
done

# Two reports never share standard output: the JSON (or the refit model)
# alone there parses, and the other report is on standard error.
"$P" eval m.json d.svm --json - > both.json 2> both.err || fail "eval --json - failed"
[ "$(head -c 1 both.json)" = "{" ] && [ "$(tail -n 1 both.json)" = "}" ] && ! grep -q "^objective  " both.json ||
  fail "eval --json -: stdout is not the JSON alone: $(head -3 both.json)"
grep -q "accuracy" both.err || fail "eval --json -: the text report is not on stderr: $(cat both.err)"
"$P" train -q --cv 3 --refit d.svm - > refit.json 2> refit.err || fail "train --cv 3 --refit d.svm - failed"
"$P" inspect refit.json > /dev/null 2>&1 || fail "--refit -: stdout is not a model alone: $(tail -3 refit.json)"
grep -q "cross-validation" refit.err || fail "--refit -: the scores are not on stderr: $(cat refit.err)"

# A closed standard output (>&-) is a failed write too, also when the command
# writes a file besides (that file's temporary once took fd 1 and swallowed the report).
for cmd in "eval m.json d.svm" "eval m.json d.svm --json closed.json" "train -q --cv 3 --refit d.svm closed_model.json"; do
  "$P" $cmd >&- 2> closed.err
  code=$?
  [ $code -ne 0 ] || fail "'$cmd >&-' exited 0"
  grep -q "standard output: write failed" closed.err || fail "'$cmd >&-' said: $(cat closed.err)"
done
# A lost message on standard error (2> /dev/full) cannot be reported, so the
# exit status says it; -q writes nothing there and succeeds.
"$P" train d.svm full_err.json 2> /dev/full && fail "train 2> /dev/full (summary lost) exited 0"
"$P" train -q d.svm full_err.json 2> /dev/full || fail "train -q 2> /dev/full (nothing to write) failed"
# With stderr closed the model is still written whole, and nothing lands in it.
"$P" train d.svm closed_err.json 2>&- || fail "train with 2>&- failed"
"$P" predict closed_err.json d.svm > closed_err.pred 2> /dev/null || fail "the model written with 2>&- does not load"

# A reader that stops early (head) ends the command quietly, with or without SIGPIPE ignored.
for trap_pipe in no yes; do
  if [ $trap_pipe = yes ]; then
    (trap '' PIPE; "$P" predict m.json d.svm 2> head.err | head -1 > /dev/null)
  else
    "$P" predict m.json d.svm 2> head.err | head -1 > /dev/null
  fi
  [ -s head.err ] && fail "closed pipe (SIGPIPE ignored: $trap_pipe) printed: $(cat head.err)"
done

# An output that is the very file behind standard input or output: refused
# (exit 2) before anything is replaced, the file intact.
refused() {  # WHAT FILE CMD...: exit 2 and FILE unchanged
  local what=$1 file=$2
  shift 2
  cp "$file" before.copy
  "$@"
  local code=$?
  [ $code -eq 2 ] || fail "$what: exit $code, not 2"
  cmp -s "$file" before.copy || fail "$what: $file was replaced"
}
cp d.svm in.svm
refused "train - in.svm < in.svm" in.svm sh -c '"$0" train -q - in.svm < in.svm 2> /dev/null' "$P"
refused "predict m - -o in.svm < in.svm" in.svm sh -c '"$0" predict m.json - -o in.svm < in.svm 2> /dev/null' "$P"
refused "train d /dev/stdin < in.svm" in.svm sh -c '"$0" train -q d.svm /dev/stdin < in.svm 2> /dev/null' "$P"
echo kept > report.out
refused "eval --json report.out > report.out" report.out \
  sh -c '"$0" eval m.json d.svm --json report.out >> report.out 2> /dev/null' "$P"
echo hi | "$P" train -q d.svm /dev/stdin 2> /dev/null && fail "train into /dev/stdin on a pipe exited 0"
# NUL bytes: refused as they arrive, not once memory runs out.
for cmd in "train -q /dev/zero z.json" "predict m.json /dev/zero" "predict m.json -"; do
  timeout 30 "$P" $cmd < /dev/zero > /dev/null 2> zero.err
  code=$?
  [ $code -eq 2 ] || fail "$cmd on NUL bytes: exit $code, not 2"
  grep -q "binary data (NUL bytes)" zero.err || fail "$cmd on NUL bytes said: $(cat zero.err)"
done
# Signals that stop a job besides INT/TERM/HUP leave no temporary file and
# the old output intact.
for i in $(seq 300); do cat d.svm; done > big.svm
for sig in QUIT USR1 XCPU; do
  echo old > sig.out
  timeout -s $sig 0.3 "$P" predict m.json big.svm -o sig.out 2> /dev/null
  [ "$(cat sig.out)" = old ] || fail "SIG$sig: the old output was replaced"
  ls sig.out.tmp-* > /dev/null 2>&1 && fail "SIG$sig left a temporary file"
done

# --line-buffered: each line is answered before the next is written.
mkfifo live.fifo
timeout 60 "$P" predict m.json live.fifo --line-buffered > live.out &
pid=$!
exec 3<> live.fifo  # read-write: never blocks, even if predict failed to start
for i in 1 2 3; do
  echo "1 1:0.9 2:0.1" >&3
  for _ in $(seq 100); do [ "$(wc -l < live.out)" -ge $i ] && break; sleep 0.05; done
  [ "$(wc -l < live.out)" -ge $i ] || fail "--line-buffered: no answer to line $i before the next"
done
exec 3>&-
wait $pid || fail "--line-buffered predict exited non-zero"

# Standard output open on an input's own file (>> or 1<>): refused before a
# byte is written, the input unchanged (predictions were appended to the data).
cp d.svm self.svm
for cmd in "predict m.json self.svm" "eval m.json self.svm" "train -q self.svm -" "featurize -q self.svm -"; do
  "$P" $cmd >> self.svm 2> self.err && fail "'$cmd >> self.svm' exited 0"
  grep -q "standard output is the data (self.svm)" self.err || fail "'$cmd >> self.svm' said: $(cat self.err)"
  cmp -s self.svm d.svm || fail "'$cmd >> self.svm' changed the data"
done
"$P" predict m.json self.svm 1<> self.svm 2> self.err && fail "predict 1<> the data exited 0"
cmp -s self.svm d.svm || fail "predict 1<> the data changed it"
# Standard error too: its message cannot be shown (it would go into the data),
# so only the exit status says it; the data stays as it was.
"$P" train self.svm self_err.json 2>> self.svm && fail "train D M 2>> D exited 0"
cmp -s self.svm d.svm || fail "train D M 2>> D changed the data"
"$P" train self.svm self_err.json 2> self_err.json && fail "train D M 2> M exited 0"
grep -q "the output is also standard error's file" self_err.json || fail "train D M 2> M said: $(cat self_err.json)"
cp m.json self_model.json
"$P" inspect self_model.json >> self_model.json 2> self.err && fail "inspect M >> M exited 0"
cmp -s self_model.json m.json || fail "inspect M >> M changed the model"

# A working directory deeper than PATH_MAX (4096 bytes): an experiment's
# relative paths, its results folder and its plots still work (absolute paths
# made from it could not be opened).
deep_root=$PWD
for i in $(seq 45); do
  d=$(printf 'd%099d' "$i")
  mkdir "$d" && cd "$d" || break
done
[ "$(pwd | wc -c)" -gt 4096 ] || fail "the deep directory is only $(pwd | wc -c) bytes"
head -400 "$deep_root/d.svm" > tr.svm
printf '{"name": "deep", "data": {"train": "tr.svm", "test": "tr.svm"}, "config": {}, "grid": {"lambda": [0.01, 0.1]}}\n' > exp.json
"$P" run -q exp.json 2> deep.err || fail "run in a directory deeper than PATH_MAX: $(cat deep.err)"
[ -s deep_results/results.json ] || fail "run in a deep directory wrote no results.json"
cd .. && "$P" run -q "$(basename "$OLDPWD")/exp.json" 2> deep.err || fail "run of a deep relative path: $(cat deep.err)"
cd "$deep_root" || exit 1

if [ $failures -ne 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "cli_streams: all checks passed"
