# Written by `pegasos run`; plot with: gnuplot trace.gp
if (!exists("prefix")) prefix = ""
terms = " " . GPVAL_TERMINALS . " "
if (strstrt(terms, " pngcairo ") > 0) {
  set terminal pngcairo size 900,600 noenhanced font ",10"; ext = ".png"
} else {
  if (strstrt(terms, " png ") > 0) { set terminal png size 900,600 noenhanced; ext = ".png" } else { set terminal svg size 900,600 noenhanced; ext = ".svg" }
}
set grid
set key outside right top
set output prefix . "trace_objective" . ext
set multiplot layout 1,2 title "training objective (output iterate)"
set logscale y
set xlabel "epoch"
set ylabel "objective"
unset key
plot 'trace.dat' index 0 using 1:3 with linespoints title "batch_size=1", \
     '' index 1 using 1:3 with linespoints title "batch_size=2", \
     '' index 2 using 1:3 with linespoints title "batch_size=4", \
     '' index 3 using 1:3 with linespoints title "batch_size=8", \
     '' index 4 using 1:3 with linespoints title "batch_size=16", \
     '' index 5 using 1:3 with linespoints title "batch_size=32", \
     '' index 6 using 1:3 with linespoints title "batch_size=64", \
     '' index 7 using 1:3 with linespoints title "batch_size=128", \
     '' index 8 using 1:3 with linespoints title "batch_size=256"
set xlabel "iterations"
set logscale x
set key outside bottom center horizontal
plot 'trace.dat' index 0 using 2:3 with linespoints title "batch_size=1", \
     '' index 1 using 2:3 with linespoints title "batch_size=2", \
     '' index 2 using 2:3 with linespoints title "batch_size=4", \
     '' index 3 using 2:3 with linespoints title "batch_size=8", \
     '' index 4 using 2:3 with linespoints title "batch_size=16", \
     '' index 5 using 2:3 with linespoints title "batch_size=32", \
     '' index 6 using 2:3 with linespoints title "batch_size=64", \
     '' index 7 using 2:3 with linespoints title "batch_size=128", \
     '' index 8 using 2:3 with linespoints title "batch_size=256"
unset multiplot
unset logscale
set output prefix . "trace_test_error" . ext
set title "error on the evaluation set"
set xlabel "epoch"
set ylabel "error"
set key outside right top
plot 'trace.dat' index 0 using 1:4 with linespoints title "batch_size=1", \
     '' index 1 using 1:4 with linespoints title "batch_size=2", \
     '' index 2 using 1:4 with linespoints title "batch_size=4", \
     '' index 3 using 1:4 with linespoints title "batch_size=8", \
     '' index 4 using 1:4 with linespoints title "batch_size=16", \
     '' index 5 using 1:4 with linespoints title "batch_size=32", \
     '' index 6 using 1:4 with linespoints title "batch_size=64", \
     '' index 7 using 1:4 with linespoints title "batch_size=128", \
     '' index 8 using 1:4 with linespoints title "batch_size=256"
