import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import java.util.List;

// Starts the in-memory MongoDB stand-in on 127.0.0.1:<port> (0 = any free
// port) for the test suites. Prints "listening <port>" once bound so the
// parent knows it is up, and exits when stdin closes so a crashed parent never
// leaves it behind.
public final class Launcher {
  // Every built-in version of mongo-java-server 1.47 announces wire version 8
  // (MongoDB 4.2) and the 7.x Node driver refuses anything below 9 (4.4), so
  // announce 4.4. The stand-in implements what our stores use either way.
  private static final MongoVersion MONGO_4_4 = new MongoVersion() {
    @Override public List<Integer> getVersionArray() { return List.of(4, 4, 0); }
    @Override public int getWireVersion() { return 9; }
  };

  // The stand-in answers a query from an index only when the query names exactly
  // that index's fields; any other query reads every document of the collection,
  // holding the collection's lock. So a conditional write by id ({_id, revision,
  // status}) or a project-scoped read ({projectId, _id}) scanned the whole
  // collection: ~90 ms at 6,000 articles on a loaded machine, during which every
  // other write of the collection waited. MongoDB itself reads such a query from
  // the _id index. These classes do the same: a query with an equality on _id
  // looks the id up, then the whole query is matched against that one document.
  static final class ById extends MemoryCollection {
    ById(MongoDatabase db, String name, CollectionOptions options, CursorRegistry cursors) {
      super(db, name, options, cursors);
    }

    // The stand-in changes a collection's index list without its lock, so an index built or
    // dropped while writes go on (the order keys' background pass) made a concurrent update fail
    // with a ConcurrentModificationException ("Unknown error" to the driver). MongoDB builds an
    // index beside writes; here the change waits for the collection's lock instead.
    @Override
    public synchronized void addIndex(Index<Integer> index) {
      super.addIndex(index);
    }

    @Override
    public synchronized void dropIndex(String name) {
      super.dropIndex(name);
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize, Document fields) {
      Object id = query.get("_id");
      if (query.size() > 1 && (id instanceof String || id instanceof Number)) {
        for (Index<Integer> index : getIndexes()) {
          if (index.getKeys().size() == 1 && "_id".equals(index.getKeys().get(0).getKey())) {
            return matchDocuments(query, index.getPositions(new Document("_id", id)), orderBy, skip, limit, batchSize, fields);
          }
        }
      }
      return super.queryDocuments(query, orderBy, skip, limit, batchSize, fields);
    }
  }

  static final class ByIdDatabase extends MemoryDatabase {
    ByIdDatabase(String name, CursorRegistry cursors) {
      super(name, cursors);
    }

    @Override
    protected MemoryCollection openOrCreateCollection(String name, CollectionOptions options) {
      return new ById(this, name, options, cursorRegistry);
    }
  }

  static final class ByIdBackend extends MemoryBackend {
    @Override
    public MemoryDatabase openOrCreateDatabase(String name) {
      return new ByIdDatabase(name, getCursorRegistry());
    }
  }

  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    MongoServer server = new MongoServer(new ByIdBackend().version(MONGO_4_4));
    server.bind("127.0.0.1", port);
    System.out.println("listening " + server.getLocalAddress().getPort());
    System.out.flush();
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
    while (System.in.read() != -1) {
      // Input is ignored; only end-of-stream matters.
    }
    server.shutdownNow();
    System.exit(0);
  }
}
