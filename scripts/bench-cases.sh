#!/usr/bin/env bash
# The bench table: the cases scripts/bench-redist.sh measures and
# scripts/compare-runs.sh times on two builds. Sourced, with R set to the
# rank count; sets CASES, one case a line:
# shape | type | from | to | strategy [| extra redist run flags]
CASES=(
  "4096x4096|f64|cyclic(64),cyclic(64)@1x${R}|cyclic(64),cyclic(64)@${R}x1|auto"
  "4096x4096|f64|cyclic(64),cyclic(64)@1x${R}|cyclic(64),cyclic(64)@${R}x1|auto|--no-node-direct"
  "4096x4096|f64|cyclic(64),cyclic(64)@1x${R}|cyclic(64),cyclic(64)@${R}x1|alltoallv"
  "4096x4096|f64|cyclic(64),cyclic(64)@1x${R}|cyclic(64),cyclic(64)@1x${R}|auto"
  "4096x4096|f64|block,*@${R}x1|*,block@1x${R}|auto"
  "4096x4096|f64|block,*@${R}x1|*,block@1x${R}|scheduled"
  "4096x4096|f64|cyclic(5),cyclic(5)@1x${R}|cyclic(8),cyclic(8)@1x${R}|auto"
  "4096x4096|f64|cyclic(100),cyclic(100)@1x${R}|cyclic(3),cyclic(3)@1x${R}|auto"
  "4096x4096|f64|cyclic,cyclic@1x${R}|cyclic(3),cyclic(3)@1x${R}|auto"
  "4096x4096|f64|cyclic,cyclic@1x${R}|cyclic(3),cyclic(3)@1x${R}|auto|--no-node-direct"
  "16777216|f64|cyclic(5)@${R}|cyclic(8)@${R}|auto"
  "16777216|f64|cyclic(100)@${R}|cyclic(3)@${R}|auto"
  "16777216|f64|cyclic(40)@${R}|cyclic(300)@${R}|auto"
  "16777216|f64|cyclic(40)@${R}|cyclic(300)@${R}|auto|--no-node-direct"
  "16777216|f64|cyclic(300)@${R}|cyclic(200)@${R}|auto"
  "16777216|f64|cyclic(60)@${R}|cyclic(3)@${R}|auto"
  "16777216|f64|cyclic(10)@${R}|cyclic(500)@${R}|auto"
  "16777216|f64|block@${R}|cyclic@${R}|auto|--no-node-direct"
  "256x256x256|f64|block,*,*@${R}x1x1|*,*,block@1x1x${R}|auto"
  "256x256x256|f64|cyclic(4),cyclic(4),*@${R}x1x1|*,cyclic(8),cyclic(8)@1x1x${R}|auto"
  "40000000|u8|block@${R}|cyclic@${R}|auto"
  "400000|u8|block@${R}|cyclic@${R}|auto"
)
