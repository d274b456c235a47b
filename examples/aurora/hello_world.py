"""hello_world.py: the program of Aurora's hello_world tutorial, for
hello_world.json: says hello with the time every ten seconds, a hundred
times, then exits."""
import time

for _ in range(100):
    print("Hello world! It is %s; sleeping 10 seconds." % time.asctime())
    time.sleep(10)
