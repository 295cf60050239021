"""Word lists for generated problems: names, entities and containers (all written here).

Names are capitalised single words and never one of the words a template starts with;
entities and containers are lowercase plural nouns, and the two lists are disjoint.
"""

from __future__ import annotations

__all__ = ["CATEGORIES", "CONTAINERS", "ENTITIES", "NAMES", "RELATIONS", "TOPICS"]

NAMES = (
    "Aaron Abigail Adam Alice Amara Amelia Andre Anna Arjun Ava Beatrice Ben Bianca Caleb "
    "Carla Chloe Clara Daniel Daria Dylan Eleanor Elena Elias Emma Ethan Eva Felix Fiona "
    "Gabriel Grace Hana Hannah Hugo Ian Ines Isaac Ivy Jack Jade James Jasmine Jonas Julia "
    "Kai Kara Kevin Lara Leo Liam Lina Lucas Lucy Maya Mateo Mia Milo Nadia Nina Noah Nora "
    "Oliver Olivia Omar Oscar Paula Peter Priya Quinn Rachel Rafael Rosa Ryan Sami Sara "
    "Simon Sofia Tara Theo Tobias Uma Victor Vera Wendy Willa Xavier Yara Yusuf Zoe Zara"
).split()

ENTITIES = (
    "apples oranges pears plums peaches lemons cherries carrots potatoes onions cookies "
    "muffins cupcakes candies marbles stickers pencils crayons markers books stamps coins "
    "cards shells pebbles feathers buttons beads balloons kites candles flowers tulips roses "
    "eggs toys puzzles ribbons"
).split()

CONTAINERS = "boxes bags baskets crates jars packs trays buckets bowls cartons".split()

#: Relations for possessive agents ("Ryan's aunt"), as the authors' overlap conditions use them.
RELATIONS = (
    "aunt uncle son daughter boss assistant neighbor friend cousin teacher roommate partner "
    "sister brother niece nephew coworker landlord host advisor"
).split()

#: Entities grouped by topic: the authors draw non-overlapping distractor entities from the
#: goal's topic ("waffles" and "granola bars" are both snacks).
TOPICS = (
    ("apples", "oranges", "pears", "plums", "peaches", "lemons", "cherries"),
    ("carrots", "potatoes", "onions"),
    ("cookies", "muffins", "cupcakes", "candies", "eggs"),
    ("pencils", "crayons", "markers", "books", "stickers", "stamps"),
    ("marbles", "toys", "puzzles", "balloons", "kites", "cards", "coins"),
    ("shells", "pebbles", "feathers", "buttons", "beads", "ribbons"),
    ("candles", "flowers", "tulips", "roses"),
)

#: A category name for each topic (same order), for questions that total different entities
#: of one topic ("If A and B sum up the fruits that they have ..."); never an entity itself.
CATEGORIES = (
    "fruits",
    "vegetables",
    "foods",
    "school supplies",
    "playthings",
    "craft materials",
    "decorations",
)
