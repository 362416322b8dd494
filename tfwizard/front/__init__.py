"""The persistent front end of the command line (issue 17): a fork server with tfwizard
imported, and the light client that `tfwizard` starts (Bazel's client/server, the Python way).

`client` imports only the standard library: it sends a command (argv, working folder,
environment, umask and its stdin/stdout/stderr) to the server over a unix socket and exits
with the command's status; with no server it runs the command in its own process and starts
one for the next command. `server` forks one child per command; the child runs
`tfwizard.cli.main` exactly as the process of a plain `tfwizard` would. `wire` is the few
names both sides share.
"""
