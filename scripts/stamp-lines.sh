#!/usr/bin/env bash
# Copies standard input to standard output as it comes, and to LOG with
# every line prefixed by the seconds since the start (one decimal): what
# scripts/suite-times.py reads.
#
#   some-command 2>&1 | scripts/stamp-lines.sh target/suite/log
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 LOG" >&2; exit 2; }
exec perl -MTime::HiRes=time -e '
    open(my $log, ">", $ARGV[0]) or die "stamp-lines: cannot write $ARGV[0]: $!\n";
    my $t0 = time;
    $| = 1;
    select((select($log), $| = 1)[0]);
    while (my $line = <STDIN>) {
        print $line;
        printf $log "%.1f %s", time - $t0, $line;
    }' "$1"
