"""http_server.py: the web service of the http_example jobs, for Stagger's
tests (it stands in for the program Aurora's end-to-end test runs).

    http_server.py HTTP_PORT HEALTH_PORT [--stay]

Answers "Hello!" on HTTP_PORT and "ok" to GET /health on HEALTH_PORT. Every
POST (Aurora's lifecycle: /quitquitquit, /abortabortabort) is answered and
its path appended to lifecycle.log in the current folder; then the server
exits, as a service that honours the lifecycle does, unless --stay.
"""
import http.server
import os
import sys
import threading


def handler(body):
    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self, text):
            data = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if body == "ok" and self.path != "/health":
                self.send_error(404)
                return
            self.answer(body)

        def do_POST(self):
            with open("lifecycle.log", "a") as log:
                log.write(self.path + "\n")
            try:
                self.answer("bye\n")
            finally:
                if "--stay" not in sys.argv:
                    sys.stdout.flush()
                    os._exit(0)

        def log_message(self, *args):
            pass

    return Handler


def serve(port, body):
    server = http.server.ThreadingHTTPServer(("", port), handler(body))
    print("Listening on port %d" % port, flush=True)
    server.serve_forever()


threads = [threading.Thread(target=serve, args=(int(sys.argv[1]), "Hello!\n")),
           threading.Thread(target=serve, args=(int(sys.argv[2]), "ok"))]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
