"""Language: one definition per concept (terms, stemming, sentences, years, values, time
sensitivity) and the question analysis every stage uses."""
