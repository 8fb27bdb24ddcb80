// What a project's podcast feed lacks before Apple Podcasts and Spotify take
// it, said where the publisher looks (GET /api/player) instead of in a
// directory's rejection e-mail days later.
import type { FeedSettings } from "../../services/auth/player-settings.js";

export interface FeedWarning {
  /** The player setting that would fix it, as PUT /api/player spells it. */
  setting: string;
  message: string;
}

/** Apple Podcasts categories and their sub-categories (the ones a feed's itunes:category may name). */
const APPLE_CATEGORIES: Record<string, string[]> = {
  Arts: ["Books", "Design", "Fashion & Beauty", "Food", "Performing Arts", "Visual Arts"],
  Business: ["Careers", "Entrepreneurship", "Investing", "Management", "Marketing", "Non-Profit"],
  Comedy: ["Comedy Interviews", "Improv", "Stand-Up"],
  Education: ["Courses", "How To", "Language Learning", "Self-Improvement"],
  Fiction: ["Comedy Fiction", "Drama", "Science Fiction"],
  Government: [],
  History: [],
  "Health & Fitness": ["Alternative Health", "Fitness", "Medicine", "Mental Health", "Nutrition", "Sexuality"],
  "Kids & Family": ["Education for Kids", "Parenting", "Pets & Animals", "Stories for Kids"],
  Leisure: ["Animation & Manga", "Automotive", "Aviation", "Crafts", "Games", "Hobbies", "Home & Garden", "Video Games"],
  Music: ["Music Commentary", "Music History", "Music Interviews"],
  News: ["Business News", "Daily News", "Entertainment News", "News Commentary", "Politics", "Sports News", "Tech News"],
  "Religion & Spirituality": ["Buddhism", "Christianity", "Hinduism", "Islam", "Judaism", "Religion", "Spirituality"],
  Science: ["Astronomy", "Chemistry", "Earth Sciences", "Life Sciences", "Mathematics", "Natural Sciences", "Nature", "Physics", "Social Sciences"],
  "Society & Culture": ["Documentary", "Personal Journals", "Philosophy", "Places & Travel", "Relationships"],
  Sports: ["Baseball", "Basketball", "Cricket", "Fantasy Sports", "Football", "Golf", "Hockey", "Rugby", "Running", "Soccer", "Swimming", "Tennis", "Volleyball", "Wilderness", "Wrestling"],
  Technology: [],
  "True Crime": [],
  "TV & Film": ["After Shows", "Film History", "Film Interviews", "Film Reviews", "TV Reviews"],
};

function categoryProblem(category: string): string | null {
  const [top, sub] = category.split("/");
  const subs = APPLE_CATEGORIES[top];
  if (!subs) return `'${top}' is not an Apple Podcasts category (for example News, Society & Culture or Technology); the directories file the feed under none or refuse it`;
  if (sub !== undefined && !subs.includes(sub)) {
    return `'${sub}' is not a sub-category of ${top} in Apple Podcasts${subs.length ? ` (it has ${subs.join(", ")})` : " (it has none)"}`;
  }
  return null;
}

/** Empty when the feed has everything Apple Podcasts and Spotify ask for (or when it is turned off). */
export function feedWarnings(feed: FeedSettings): FeedWarning[] {
  if (!feed.enabled) return [];
  const out: FeedWarning[] = [];
  if (!feed.imageUrl) {
    out.push({
      setting: "feed.imageUrl",
      message: "No artwork of your own: the feed shows a generated placeholder (1400×1400 PNG). Set a square JPEG or PNG of 1400 to 3000 pixels to be recognisable in Apple Podcasts and Spotify.",
    });
  }
  if (!feed.ownerEmail) {
    out.push({
      setting: "feed.ownerEmail",
      message: "No owner e-mail: Spotify proves ownership by mailing a code to the feed's itunes:owner address, and Apple Podcasts contacts the owner there; without it the feed cannot be submitted.",
    });
  }
  const category = categoryProblem(feed.category);
  if (category) out.push({ setting: "feed.category", message: category });
  return out;
}
