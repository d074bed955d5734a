"""Camera card recognition: frames in, cards with a confidence out, into the same input path as the shoe."""
