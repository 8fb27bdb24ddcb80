export const ARTICLE_WRITER_DOCS = 30;
export const ARTICLE_WRITER_PROJECT = "k";
export const ARTICLE_WRITER_LABELS = ["a", "b", "c"] as const;
