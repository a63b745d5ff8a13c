"""Self-checks of Chapter 9's exercises, registered in :data:`nqf_mini.course.registry.CHECKS`."""
