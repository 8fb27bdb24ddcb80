import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
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

  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    MongoServer server = new MongoServer(new MemoryBackend().version(MONGO_4_4));
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
