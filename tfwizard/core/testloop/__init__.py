"""`tfwizard test`: TensorFlow's own tests of a change, run in the warm workspace: the argv and results, the selection, the summary, the live job."""
