"""Reads one message, closes its stdout (the runner's READ fails at once), says why on
stderr with a CRLF line and one cut short, and exits 3 a little later."""
import os
import sys
import time

for line in sys.stdin:
    if line.rstrip("\n") == ".":
        break
os.close(1)
sys.stderr.write("dying\r\nno newline")
sys.stderr.flush()
time.sleep(0.3)
sys.exit(3)
