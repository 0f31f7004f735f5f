"""Jupyter server settings for grading this course in formgrader.

Jupyter does not read config from the working folder: pass this file on the command line,
from the course folder: ``jupyter server --config=jupyter_server_config.py ...`` (README,
"Grading the written answers by hand").

formgrader shows students' answers inside its own page; besides the sanitising at autograde
(autograder/confinement/sanitise.py), each formgrader page is sent with a content-security
policy that lets only formgrader's own scripts run (autograder/confinement/page_policy.py).
"""

c = get_config()  # noqa: F821 - provided by traitlets when jupyter server loads the file

c.ServerApp.jpserver_extensions = {
    "nbgrader.server_extensions.formgrader": True,
    "autograder.confinement.page_policy": True,
}
# Loopback only: formgrader writes the gradebook for whoever holds the token.
c.ServerApp.ip = "127.0.0.1"
