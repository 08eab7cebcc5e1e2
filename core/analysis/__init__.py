"""Which lessons help: the joint effect, leave-one-out, randomized dropout, candidacies, coverage."""
