git archive refs/tags/v2.5.0 widget/ | tar -x -C /tmp/v25
