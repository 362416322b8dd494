"""Running a plan in containers: the runner over its steps, containers, volumes and artifacts, the events it yields, progress, the build record, attach, the preflight."""
