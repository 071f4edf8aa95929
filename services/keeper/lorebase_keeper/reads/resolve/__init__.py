"""POST /resolve: ground the words of a question in the schema and the stored values (seed
section 2, issue 16; docs/resolve.md).

It interprets nothing, runs no query and calls no model: the same request at the same Revision
answers the same candidates. The levels, each taking only words the earlier ones left:
names (exact, synonym, partial; ground.py), comparisons with comparatives and dates as people say
them (comparisons.py with operands.py and predicates.py, graded.py, dates.py), verbs of state
(states.py), intent hints with superlatives, top-k and counts of related Records (hints.py) -- these read no data (phrases.py),
and their English words are data (lexicon.py) -- Record keys and titles (titles.py), similar
spelling (ground.py), and the embedding level (embedding.py). The vocabulary holds only what the caller may read (vocabulary.py).
"""

from lorebase_keeper.reads.resolve.answer import resolve
from lorebase_keeper.reads.resolve.ground import names, similar
from lorebase_keeper.reads.resolve.vocabulary import KEPT_COUNTS, Term, Vocabulary, vocabulary

__all__ = ["KEPT_COUNTS", "Term", "Vocabulary", "names", "resolve", "similar", "vocabulary"]
